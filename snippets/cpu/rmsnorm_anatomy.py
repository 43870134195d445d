"""What each RMSNorm member does with a row, computed on a CPU while the devlog is built.

:func:`tilings_table` reads the tilings from our plans' own functions (``row_block_tiling``,
``persistent_tiling``, ``cluster_size``), so the table follows the code: threads per CTA, rows per
CTA, the cluster, the 128-bit vectors of x each thread holds in registers, and the bytes of x one
CTA loads per row block. :func:`torch_passes` records which ATen ops ``torch.nn.functional.rms_norm``
dispatches for a bf16 x with an fp32 weight (the group's inputs, shrunk), and counts the bytes per
element each op reads and writes over the full (M, N) tensors. Both are facts of code, not timings.
"""

from __future__ import annotations

import warnings

BF16_BYTES = 2
SHAPES_N = (4096, 8192, 16384)


def _tilings(n: int) -> dict[str, object]:
    from mla_var3.kernel.cute_python.reduction.rmsnorm.v0.plan import BF16_BITS
    from mla_var3.kernel.cute_python.reduction.rmsnorm.v1.plan import persistent_tiling
    from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import cluster_size, row_block_tiling

    return {
        "rmsnorm_v0": row_block_tiling(n, BF16_BITS, 1),
        "rmsnorm_v1": persistent_tiling(n),
        "rmsnorm_v2": row_block_tiling(n, BF16_BITS, None, cluster_size(n, 8192), least=8),
    }


def tilings_table() -> str:
    """A Markdown table: each step's tiling at the group's three row lengths (the plans' default configs)."""
    rows = [
        "| N | step | threads / CTA | rows / CTA | cluster | x vectors / thread | x per CTA and row block |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in SHAPES_N:
        for step, t in _tilings(n).items():
            x_bytes = t.rows_per_cta * t.cols_per_cta * BF16_BYTES
            rows.append(
                f"| {n} | `{step}` | {t.threads} | {t.rows_per_cta} | {t.cluster_n} | "
                f"{t.vectors_per_thread} | {x_bytes // 1024} KiB |"
            )
    return "\n".join(rows)


def _full_size(t: object, shape: tuple[int, ...]) -> bool:
    import torch

    return isinstance(t, torch.Tensor) and tuple(t.shape) == shape


def torch_passes(m: int = 8, n: int = 64) -> str:
    """A Markdown table of the ATen ops behind ``y.copy_(F.rms_norm(x, (n,), w, eps))`` for bf16 x and
    fp32 w, with the bytes per element of x each reads and writes over full-size tensors."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    shape = (m, n)
    ops: list[tuple[str, int, int]] = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's hook
            out = func(*args, **(kwargs or {}))
            # An in-place op (copy_) returns its first argument: that one is written, not read.
            read = sum(a.element_size() for a in args if _full_size(a, shape) and a is not out)
            written = out.element_size() if _full_size(out, shape) else 0
            ops.append((str(func.overloadpacket.__name__), read, written))
            return out

    x = torch.randn(shape).bfloat16()
    w = torch.randn(n)
    y = torch.empty_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that the dtypes keep it off its fused kernel
        with Record():
            y.copy_(torch.nn.functional.rms_norm(x, (n,), w, 1e-6))
    lines = ["| ATen op | bytes read per element | bytes written per element |", "|---|---|---|"]
    lines += [f"| `{name}` | {r} | {wr} |" for name, r, wr in ops]
    full = [(r, wr) for _, r, wr in ops if r or wr]
    total = sum(r + wr for r, wr in full)
    fused = 2 * BF16_BYTES  # one fused kernel: x read once, y written once (bf16)
    lines.append(
        f"\n{len(ops)} ops, {len(full)} of them over the whole (M, N) tensor: {total} bytes per element "
        f"against {fused} for one fused pass, {total / fused:.0f} times the traffic (torch {torch.__version__}, "
        "traced on the CPU build the site is built with)."
    )
    return "\n".join(lines)


__all__ = ["tilings_table", "torch_passes"]
