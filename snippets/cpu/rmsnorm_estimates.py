"""Back-of-envelope expectations for the RMSNorm and row-reduce groups, computed on a CPU.

The devlog (``docs/kernels/rmsnorm.md``) calls these through ``estimate()`` before the measured
numbers. The bytes are the plans' own roofline counts (x read and y written in bf16, the fp32 weight
once); the bandwidth is NVIDIA's H200 datasheet figure (4.8 TB/s HBM3e), an upper bound a real copy
does not reach. The L2 traffic of a weight re-read per row block follows from the tilings.
"""

from __future__ import annotations

HBM_BYTES_PER_S = 4.8e12  # NVIDIA H200 datasheet: GPU memory bandwidth 4.8 TB/s (HBM3e)
BF16, FP32 = 2, 4


def rmsnorm_bytes(m: int, n: int) -> int:
    """x read and y written (bf16), the weight read once (fp32): what the group's roofline counts."""
    return 2 * m * n * BF16 + n * FP32


def rmsnorm_floor(m: int, n: int) -> str:
    """The DRAM-bound time of one RMSNorm forward at the datasheet bandwidth."""
    moved = rmsnorm_bytes(m, n)
    return f"{moved / HBM_BYTES_PER_S * 1e6:.0f} µs ({moved / 2**20:.0f} MiB at the datasheet's HBM bandwidth)"


SMS = 132  # device.sm_count of our H200's run records


def weight_reads(m: int, n: int, reads: int) -> str:
    """L2 bytes of the fp32 weight read ``reads`` times (``rmsnorm_v0``: once per row, ``m``;
    ``rmsnorm_v1``: once per persistent CTA), against the DRAM bytes of x and y."""
    weight = reads * n * FP32
    return f"{weight / 2**20:.0f} MiB of weight from L2 beside {2 * m * n * BF16 / 2**20:.0f} MiB of x and y"


def row_reduce_floor(m: int, n: int, element_bytes: int = BF16) -> str:
    """The DRAM-bound time of one row sum + max: x read once (the fp32 outputs are 8 bytes a row)."""
    moved = m * n * element_bytes + 8 * m
    return f"{moved / HBM_BYTES_PER_S * 1e6:.0f} µs ({moved / 2**20:.0f} MiB at the datasheet's HBM bandwidth)"


def persistent_weight_reads(m: int, n: int, ctas_per_sm: int) -> str:
    """:func:`weight_reads` for ``rmsnorm_v1``: one read per CTA, SMs x ``ctas_per_sm`` CTAs."""
    return weight_reads(m, n, SMS * ctas_per_sm)


__all__ = ["SMS", "persistent_weight_reads", "rmsnorm_bytes", "rmsnorm_floor", "row_reduce_floor", "weight_reads"]
