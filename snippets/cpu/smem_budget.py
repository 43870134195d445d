"""SMEM and pipeline-stage budget for a TMA-fed GEMM mainloop: how many A/B stages fit, and what is left.

Runs on a CPU. The capacity per architecture comes from the CuTe DSL (``cutlass.memory``); the
arithmetic is the one a kernel's stage computation does: bytes per stage = A tile + B tile,
reserved = mbarriers + epilogue staging, stages = what fits in the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

import cutlass.memory

MBARRIER_RESERVE = 1024  # bytes kept for pipeline barriers, as CUTLASS's Hopper GEMMs reserve


# --8<-- [start:budget]
@dataclass(frozen=True)
class GemmTile:
    """A CTA tile (M, N, K), operand and output element sizes, and the epilogue's staging buffer."""

    m: int
    n: int
    k: int
    ab_bytes: int = 2  # fp16/bf16 operands
    c_bytes: int = 2
    epi_tile: tuple[int, int] = (64, 32)
    epi_stages: int = 4

    def stage_bytes(self) -> int:
        return (self.m * self.k + self.n * self.k) * self.ab_bytes

    def epilogue_bytes(self) -> int:
        return self.epi_tile[0] * self.epi_tile[1] * self.c_bytes * self.epi_stages


def max_stages(tile: GemmTile, arch: str, ctas_per_sm: int = 1) -> tuple[int, int]:
    """(A/B stages that fit, bytes left over) for one CTA when ``ctas_per_sm`` share the SM's SMEM."""
    capacity = cutlass.memory.get_smem_capacity_in_bytes(arch) // ctas_per_sm
    usable = capacity - MBARRIER_RESERVE - tile.epilogue_bytes()
    stages = usable // tile.stage_bytes()
    return stages, usable - stages * tile.stage_bytes()
# --8<-- [end:budget]


def budget_table(arch: str = "sm_90") -> str:
    """A Markdown table of common Hopper tiles: stage size, stages that fit, SMEM left unused."""
    capacity = cutlass.memory.get_smem_capacity_in_bytes(arch)
    rows = []
    for tile in (GemmTile(128, 128, 64), GemmTile(128, 256, 64), GemmTile(256, 128, 64), GemmTile(128, 128, 128)):
        for ctas in (1, 2):
            stages, left = max_stages(tile, arch, ctas)
            rows.append(
                f"| {tile.m}x{tile.n}x{tile.k} | {ctas} | {tile.stage_bytes() / 1024:.0f} KiB | "
                f"{tile.epilogue_bytes() / 1024:.0f} KiB | {stages} | {left / 1024:.1f} KiB |"
            )
    header = [
        f"SMEM per SM on `{arch}`: {capacity} bytes ({capacity / 1024:.0f} KiB), of which {MBARRIER_RESERVE} "
        "are kept for barriers.",
        "",
        "| CTA tile (fp16) | CTAs/SM | A+B per stage | epilogue staging | stages that fit | left over |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join(header + rows)
