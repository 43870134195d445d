"""Correctness: poison outputs with NaN, compare every element with a higher-precision reference."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from mla_var3.kernel.plan import Tensors


@dataclass(frozen=True)
class OutputCheck:
    """One output compared with its reference."""

    name: str
    elements: int
    rel_l2: float
    max_abs: float
    nonfinite: int  # NaN/Inf in the output where the reference is finite (poison never overwritten)
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.nonfinite == 0 and math.isfinite(self.rel_l2) and self.rel_l2 <= self.tolerance


@dataclass(frozen=True)
class CheckResult:
    outputs: tuple[OutputCheck, ...]

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)

    def to_dict(self) -> dict:
        return {"passed": self.passed, "outputs": [asdict(o) | {"passed": o.passed} for o in self.outputs]}

    def summary(self) -> str:
        parts = [
            f"{o.name}: rel_l2={o.rel_l2:.3e} (tol {o.tolerance:.0e}) max_abs={o.max_abs:.3e}"
            + (f" nonfinite={o.nonfinite}" if o.nonfinite else "")
            for o in self.outputs
        ]
        return ("PASS " if self.passed else "FAIL ") + "; ".join(parts)


def poison(outputs: Tensors) -> None:
    """Fill every floating output with NaN so an element the kernel never wrote cannot pass."""
    for t in outputs.values():
        if t.is_floating_point():
            t.fill_(float("nan"))
        else:
            t.fill_(-1)


def compare(outputs: Tensors, reference: Tensors, tolerance: float) -> CheckResult:
    """Every element of each output against the reference: rel-L2, max-abs, non-finite count."""
    missing = set(reference) - set(outputs)
    if missing:
        raise KeyError(f"outputs lack {sorted(missing)} that the reference produced")
    return CheckResult(tuple(_compare_one(name, outputs[name], ref, tolerance) for name, ref in reference.items()))


def _compare_one(name: str, out: torch.Tensor, ref: torch.Tensor, tolerance: float) -> OutputCheck:
    import torch

    if out.shape != ref.shape:
        raise ValueError(f"output {name!r} has shape {tuple(out.shape)}, reference {tuple(ref.shape)}")
    o = out.detach().to(torch.float64)
    r = ref.detach().to(device=o.device, dtype=torch.float64)
    nonfinite = int((~torch.isfinite(o) & torch.isfinite(r)).sum())
    diff = torch.where(torch.isfinite(o), o - r, torch.full_like(o, float("inf")))
    ref_norm = float(torch.linalg.vector_norm(r))
    err_norm = float(torch.linalg.vector_norm(diff))
    rel = err_norm / ref_norm if ref_norm > 0 else err_norm
    max_abs = float(diff.abs().max()) if diff.numel() else 0.0
    return OutputCheck(name, out.numel(), rel, max_abs, nonfinite, tolerance)
