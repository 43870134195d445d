"""SMEM and pipeline-stage budget of a TMA-fed GEMM mainloop: how many A/B stages fit, and what is left.

Runs on a CPU. The capacity per architecture comes from the CuTe DSL (``cutlass.memory``); the
arithmetic is the one a kernel's stage computation does: bytes per stage = one A tile + one B
tile, reserved = mbarriers + the epilogue's staging buffers, stages = what fits in the rest.
``kernel_check_table`` compares it with the stage count our Hopper GEMM computes for itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import cutlass.memory

MBARRIER_RESERVE = 1024  # barrier storage, kept 1 KiB aligned like the swizzled buffers after it


# --8<-- [start:budget]
@dataclass(frozen=True)
class GemmTile:
    """A CTA tile (M, N, K) and its element size; the epilogue ring is what the kernel keeps for C."""

    m: int
    n: int
    k: int = 64
    elem_bytes: int = 2  # fp16/bf16 operands

    def stage_bytes(self) -> int:
        return (self.m + self.n) * self.k * self.elem_bytes


def stages_that_fit(tile: GemmTile, epilogue_bytes: int, arch: str = "sm_90") -> tuple[int, int]:
    """(A/B stages that fit in one CTA's SMEM, bytes left over) next to barriers and the epilogue."""
    capacity = cutlass.memory.get_smem_capacity_in_bytes(arch)
    usable = capacity - MBARRIER_RESERVE - epilogue_bytes
    stages = usable // tile.stage_bytes()
    return stages, usable - stages * tile.stage_bytes()
# --8<-- [end:budget]


def kernel_check_table(arch: str = "sm_90") -> str:
    """A Markdown table: this calculator next to ``hopper_gemm_ws``'s own ``smem_budget``/``max_stages``."""
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized import kernel as gemm

    capacity = cutlass.memory.get_smem_capacity_in_bytes(arch)
    rows = []
    for m, n in ((128, 256), (128, 128), (64, 256), (64, 128)):
        tile = GemmTile(m, n)
        kernel_stages = gemm.max_stages((m, n, tile.k), epi_stages=4)
        budget = gemm.smem_budget((m, n, tile.k), kernel_stages, epi_stages=4)
        stages, left = stages_that_fit(tile, budget.c_ring, arch)
        rows.append(
            f"| {m}x{n}x{tile.k} | {tile.stage_bytes() // 1024} KiB | {budget.c_ring // 1024} KiB | "
            f"{stages} | {left / 1024:.1f} KiB | {kernel_stages} | {budget.total / 1024:.0f} KiB |"
        )
    return "\n".join(
        [
            f"SMEM a block may use on `{arch}` (from `cutlass.memory`): {capacity} bytes = "
            f"{capacity // 1024} KiB; the kernel's own constant: {gemm.SMEM_CAPACITY_SM90 // 1024} KiB.",
            "",
            "| CTA tile (bf16) | A+B per stage | C ring | stages (calculator) | left over | stages (kernel) "
            "| kernel SMEM total |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
