"""The two tile walks of ``snippets/gpu/global_coalescing.py`` on the CPU: what the binary shows (sm_90a SASS)
and what a warp's load asks of the memory system (bytes and 32-byte sectors per request, from the DSL's
own layout of the row-major matrix).

The SASS of the bad form is no larger -- it is smaller: the column walk's four accesses differ by an
immediate offset, the row walk's each need their own address. Only the addresses say which one is
coalesced: lanes one element apart (128 contiguous bytes per warp, 4 sectors) or one matrix row apart
(32 sectors, each carrying 4 useful bytes of 32).
"""

from __future__ import annotations

from functools import cache

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from mla_var3.kernel.tensors import fake_dynamic_tensor
from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for, sass_counts
from snippets.gpu.global_coalescing import TILE, TileWalkCopy

SECTOR_BYTES = 32  # the unit a global load is served in
WARP = 32
FP32_BYTES = 4


@cache
def sass(column_walk: bool) -> dict[str, int]:
    """Mnemonic -> count of the walk compiled for sm_90a (dynamic m, n: the binary of every shape)."""
    args = [fake_dynamic_tensor(cutlass.Float32, (TILE, TILE)) for _ in range(2)]
    return sass_counts(compile_for(TileWalkCopy(column_walk), *args, cuda.CUstream(0), arch="sm_90a"))


def report(column_walk: bool) -> str:
    """The global accesses and the instruction count of one walk."""
    counts = sass(column_walk)
    accesses = ", ".join(f"{op} ×{n}" for op, n in sorted(counts.items()) if op.startswith(("LDG", "STG")))
    total = sum(n for op, n in counts.items() if op != "NOP")
    return f"{accesses}; {total} instructions"


@expect(prints="row walk:    LDG.E ×4, STG.E ×4; 71 instructions\n"
               "column walk: LDG.E ×4, STG.E ×4; 44 instructions")  # fmt: skip
def symptom() -> None:
    for label, column_walk in (("row walk:   ", False), ("column walk:", True)):
        print(f"{label} {report(column_walk)}")


def warp_offsets(column_walk: bool, n: int) -> list[int]:
    """The element offsets the 32 lanes of warp 0 load in its first access, through the DSL's row-major
    layout of an (m, n) matrix -- the index the kernel gives each lane, (k, tx) or (tx, k) with k = 0."""
    offsets: list[int] = []

    @cute.jit
    def trace() -> None:
        matrix = cute.make_layout((TILE * 4, n), stride=(n, 1))  # rows beyond the tile do not matter
        offsets.extend(matrix((lane, 0) if column_walk else (0, lane)) for lane in range(WARP))

    trace()
    return offsets


def sector_table(n: int = 8192) -> str:
    """Markdown: per walk, the byte span of one warp load, its 32-byte sectors, and the useful fraction."""
    rows = ["| walk | lane stride | bytes spanned | sectors per request | useful bytes per sector |", "|---|---|---|---|---|"]
    for name, column_walk in (("row walk", False), ("column walk", True)):
        addresses = [FP32_BYTES * offset for offset in warp_offsets(column_walk, n)]
        sectors = {address // SECTOR_BYTES for address in addresses}
        stride = addresses[1] - addresses[0]
        span = addresses[-1] + FP32_BYTES - addresses[0]
        rows.append(f"| {name} | {stride:,} B | {span:,} B | {len(sectors)} | {WARP * FP32_BYTES // len(sectors)} of {SECTOR_BYTES} |")
    return "\n".join(rows)
