"""Back-of-envelope expectations for the memory micro-benchmarks (``snippets/gpu/``), computed on a CPU.

Pages call the ``*_time``/``*_copies``/``working_set`` functions through ``estimate()`` before the
measured numbers, and run :func:`bank_table` and :func:`composition_error` at build time. The
inputs are published facts about our H200, each named where it is defined: HBM bandwidth from
NVIDIA's datasheet, the SM count and L2 size the device reports (every run record's ``device``
section), the maximum SM clock NVML reports (``clocks.*.max_sm_mhz``), and the shared-memory bank
rule of the CUDA programming guide (32 banks of 4 bytes, one access per bank per clock).
"""

from __future__ import annotations

import cutlass.cute as cute

from snippets.cpu.dsl_tools import compile_for
from snippets.gpu import async_copy_vs_tma, smem_swizzle

HBM_BYTES_PER_S = 4.8e12  # NVIDIA H200 datasheet: GPU memory bandwidth 4.8 TB/s (HBM3e)
SMS = 132  # device.sm_count of our H200's run records
L2_BYTES = 60 << 20  # device.l2_bytes of our H200's run records
MAX_SM_HZ = 1.98e9  # NVML's max_sm_mhz in the same records
BANKS = 32  # 4-byte banks; a warp's shared access takes one pass per distinct word in its busiest bank


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


# --8<-- [start:dram]
def copy_time(elements: int, element_bytes: int = 4) -> str:
    """The DRAM-bound time of a copy: read and write every element once, at the datasheet bandwidth."""
    moved = 2 * elements * element_bytes
    return f"{_us(moved / HBM_BYTES_PER_S)} ({moved >> 20} MiB at the datasheet's HBM bandwidth)"


# --8<-- [end:dram]


# --8<-- [start:replays]
def transpose_replay_time(m: int, n: int) -> str:
    """The shared-memory time of the unswizzled transpose: every column read of a warp hits one bank,
    so each of its 32 elements takes its own pass; one pass per SM and clock, all SMs busy."""
    passes_per_sm = m * n / SMS  # column reads: one pass per element (the row writes add 1/32 of that)
    return (
        f"{_us(passes_per_sm / MAX_SM_HZ)} ({passes_per_sm / 1e3:.0f} thousand passes per SM, top SM clock)"
    )


# --8<-- [end:replays]


def load_copies(m: int, n: int) -> str:
    """Copies that load an m x n fp32 matrix tile by tile: cp.async (16 bytes each) vs TMA (a tile each)."""
    tiles = (m // async_copy_vs_tma.TILE_M) * (n // async_copy_vs_tma.TILE_N)
    per_tile = async_copy_vs_tma.TILE_BYTES // (async_copy_vs_tma.VECTOR_BITS // 8)
    return f"{tiles * per_tile:,} cp.async copies ({per_tile:,} per tile) against {tiles:,} TMA copies"


def working_set(elements: int, element_bytes: int = 4) -> str:
    """Source plus destination of a copy, against the L2."""
    moved = 2 * elements * element_bytes
    return f"{moved >> 20} MiB, {moved / L2_BYTES:.0%} of the {L2_BYTES >> 20} MiB L2"


def bank_table(column: int = 5) -> str:
    """Markdown: the bank each lane of a warp reads when it reads one column of the transpose's SMEM
    tile, row-major and swizzled (the layouts ``smem_swizzle`` builds, evaluated by the DSL)."""
    rows = []
    for swizzle in (False, True):
        banks = [offset % BANKS for offset in _column_offsets(swizzle, column)]
        busiest = max(banks.count(b) for b in set(banks))
        name = "`S<5,0,5>` o row-major" if swizzle else "row-major `(32,32):(32,1)`"
        rows.append(f"| {name} | {' '.join(map(str, banks))} | {len(set(banks))} | {busiest} |")
    return "\n".join(
        [
            f"| SMEM tile | bank read by lanes 0-31 (column {column}) | distinct banks | passes |",
            "|---|---|---|---|",
            *rows,
        ]
    )


def _column_offsets(swizzle: bool, column: int) -> list[int]:
    """The SMEM offsets (in elements) of one column of the tile, lane by lane, as the DSL computes them."""
    offsets: list[int] = []

    @cute.jit
    def trace() -> None:
        layout = smem_swizzle.smem_tile_layout(swizzle)
        offsets.extend(layout((lane, column)) for lane in range(smem_swizzle.TILE))

    compile_for(trace)
    return offsets


def composition_error() -> str:
    """The error DSL 4.8.1 raises for ``cute.composition(swizzle, layout)``, the form CUTLASS's type docs
    show; raises if that form starts to work (then the page must change)."""
    import cutlass._mlir.ir as ir

    @cute.jit
    def compose() -> None:
        cute.composition(cute.make_swizzle(5, 0, 5), cute.make_layout((32, 32), stride=(32, 1)))

    try:
        compile_for(compose)
    except ir.MLIRError as error:
        return next(line.strip() for line in str(error).splitlines() if "error:" in line)
    raise AssertionError("cute.composition(swizzle, layout) compiled: update memory-microbenchmarks.md")
