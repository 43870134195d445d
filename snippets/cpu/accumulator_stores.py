"""Vectorized accumulator stores: what one warp's store of a WGMMA fragment touches, and what v5 and v6
of our MLA decode compile to, for the vectorized-accumulator-stores pattern page.

``sector_table`` reads the accumulator's thread -> (row, column) map from the DSL (the epilogues
snippet's ``fragment_coords``: a one-warpgroup WGMMA's ``partition_C`` of an identity tensor) and
counts, for the first store instruction of warp 0, the rows, bytes and 32-byte sectors it writes in
a row-major fp32 matrix as wide as the MLA split partial (512 columns), storing one value per lane
(v5) or a lane's two adjacent columns at once (v6). ``attention_stores`` compiles ``mla_decode_v5``
and ``mla_decode_v6`` at the b = 1 latency shape for sm_90a through the compile cache (once per
kernel and process) and counts the global stores of their attention kernel; ``store_table`` shows
them. ``aligned_stores`` compiles one stand-in fragment store (``store_fragment``) for C's pointer
declared 16- or 4-byte aligned: the same ``autovec_copy``, 64-bit or element-wise. ``cta_traffic``
is the arithmetic behind "when it matters": the KV bytes one attention CTA reads against the fp32
partial it writes, under the split rule of v4 to v7.
"""

from __future__ import annotations

import math
import re
from functools import cache

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.kernel.cute_python.mla.decode.plan_common import (
    COMPILE_SM_COUNT,
    TILE_M,
    TILE_N,
    default_splits,
)
from mla_var3.kernel.workloads.mla import D_LATENT, D_QK
from snippets.cpu.dsl_tools import compile_for, sass_counts
from snippets.cpu.epilogues import SECTOR_BYTES, fragment_coords

KERNELS = ("mla_decode_v5", "mla_decode_v6")
B1 = {"b": 1, "t": 8192, "h": 128}  # the latency shape: 66 splits of two KV blocks
FP32_BYTES = 4
KV_BYTES = 2  # bf16 cache
WARP = 32
_STG_RE = re.compile(r"^STG\.E(\.\w+)?$")


def warp_store(
    values_per_store: int, row_elems: int = D_LATENT, elem_bytes: int = FP32_BYTES
) -> tuple[int, int, int]:
    """(rows, bytes written, 32-byte sectors touched) by warp 0's first store of its accumulator
    fragment into a row-major matrix ``row_elems`` wide, each lane storing ``values_per_store``
    consecutive values of its fragment (1: one column; 2: the lane's two adjacent columns)."""
    coords = fragment_coords()
    cells = [coords[lane][v] for lane in range(WARP) for v in range(values_per_store)]
    sectors = {(r * row_elems + c) * elem_bytes // SECTOR_BYTES for r, c in cells}
    return len({r for r, _ in cells}), len(cells) * elem_bytes, len(sectors)


def sector_table() -> str:
    """One warp store of the fp32 partial, 32-bit (v5) against 64-bit (v6)."""
    rows = ["| store per lane | rows touched | bytes written | 32-byte sectors | bytes of those sectors used |",
            "|---|---|---|---|---|"]  # fmt: skip
    for values, label in (
        (1, "one value, 32-bit (`STG.E`)"),
        (2, "two adjacent columns, 64-bit (`STG.E.64`)"),
    ):
        touched, written, sectors = warp_store(values)
        rows.append(
            f"| {label} | {touched} | {written} | {sectors} | {100 * written // (sectors * SECTOR_BYTES)} % |"
        )
    return "\n".join(rows)


@cache
def attention_stores(name: str) -> dict[str, int]:
    """Global-store mnemonic -> count in the attention kernel of ``name`` (``mla_decode_v5`` or
    ``_v6``), compiled for sm_90a at :data:`B1` (split, so the kernel writes fp32 partials)."""
    from mla_var3.analysis.sass import disassemble, parse_sass
    from mla_var3.kernel.arch import Arch
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.registry import get_plan
    from mla_var3.kernel.workloads.mla import mla_shape
    from mla_var3.knowledge.expected import program_name_only

    plan = get_plan(name)("bfloat16")
    with program_name_only():  # the DSL parses sys.argv (mkdocs's own arguments) when it compiles
        result = compile_cached(
            plan, plan.default_config(), mla_shape(**B1), Arch.parse("sm_90a"), need_function=False
        )
    kernels = parse_sass(disassemble(result.compiled.cubin))
    (attention,) = [ops for kernel, ops in kernels.items() if "attention_kernel" in kernel]
    counts = {"STG.E": 0, "STG.E.64": 0}
    for op in attention:
        if _STG_RE.match(op):
            counts[op] = counts.get(op, 0) + 1
    return counts


def store_table() -> str:
    """The attention kernel's global stores per thread, v5 and v6 (the 2 ``STG.E`` left in v6 are its
    two rows' partial LSEs)."""
    rows = [
        "| kernel | `STG.E` (32-bit) | `STG.E.64` (64-bit) | bytes stored per thread |",
        "|---|---|---|---|",
    ]
    for name in KERNELS:
        counts = attention_stores(name)
        stored = sum(n * (64 if op.endswith(".64") else 32) // 8 for op, n in counts.items())
        rows.append(f"| `{name}` | {counts['STG.E']} | {counts['STG.E.64']} | {stored} |")
    return "\n".join(rows)


TILE = (64, 32)  # one warpgroup's fp32 accumulator
THREADS = 128


# --8<-- [start:alignment]
@cute.kernel
def store_fragment_kernel(c: cute.Tensor):
    """One warpgroup writes a stand-in fp32 accumulator fragment to C with ``autovec_copy``."""
    tidx, _, _ = cute.arch.thread_idx()
    tiled_mma = sm90_utils.make_trivial_tiled_mma(
        cutlass.BFloat16, cutlass.BFloat16, OperandMajorMode.K, OperandMajorMode.K, cutlass.Float32, (1, 1, 1),
        tiler_mn=TILE,
    )  # fmt: skip
    acc = cute.make_rmem_tensor(tiled_mma.partition_shape_C(TILE), cutlass.Float32)
    for i in cutlass.range_constexpr(cute.size(acc)):
        acc[i] = cutlass.Float32(tidx) + cutlass.Float32(i)
    cute.autovec_copy(acc, tiled_mma.get_slice(tidx).partition_C(c))


@cute.jit
def store_fragment(c: cute.Tensor):
    store_fragment_kernel(c).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cache
def aligned_stores(align: int) -> dict[str, int]:
    """Global-store mnemonic -> count of :func:`store_fragment` for a row-major fp32 C of one tile whose
    pointer is declared ``align`` bytes aligned (``assumed_align``), compiled for sm_90a."""
    c = make_fake_compact_tensor(cutlass.Float32, TILE, stride_order=(1, 0), assumed_align=align)
    return {op: n for op, n in sass_counts(compile_for(store_fragment, c)).items() if op.startswith("STG")}


# --8<-- [end:alignment]


def alignment_table(aligns: tuple[int, ...] = (16, 4)) -> str:
    """The same fragment store, with C's pointer declared 16-byte or 4-byte aligned."""
    rows = ["| C's pointer declared aligned to | global stores per thread |", "|---|---|"]
    for align in aligns:
        stores = ", ".join(f"{n} `{op}`" for op, n in sorted(aligned_stores(align).items()))
        rows.append(f"| {align} bytes | {stores} |")
    return "\n".join(rows)


def cta_traffic(b: int = 1, t: int = 8192, h: int = 128) -> str:
    """KV bytes one attention CTA reads against the fp32 partial it writes (none with one split), at
    the split rule of v4 to v7 (``default_splits``, shares rounded up to whole pairs of blocks)."""
    query_tiles = math.ceil(h / TILE_M)
    kv_blocks = math.ceil(t / TILE_N)
    splits = default_splits(b, query_tiles, kv_blocks, COMPILE_SM_COUNT)
    per_split = math.ceil(kv_blocks / (2 * splits)) * 2 if splits > 1 else kv_blocks
    kv = per_split * TILE_N * D_QK * KV_BYTES
    if splits == 1:
        out = TILE_M * D_LATENT * KV_BYTES
        return f"one split: {kv // 1024} KiB of KV read per CTA, {out // 1024} KiB of bf16 output written"
    part = TILE_M * D_LATENT * FP32_BYTES
    return (
        f"{splits} splits of {per_split} KV blocks: {kv // 1024} KiB of KV read per CTA, "
        f"{part // 1024} KiB of fp32 partial written"
    )
