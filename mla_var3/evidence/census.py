"""The mismatch census: a kernel launched many times on NaN-poisoned outputs, every element of every launch
compared *exactly* with the reference rounded to the output's dtype, the differing elements counted.

One checked launch answers "is this kernel right?" for a kernel that is; for a race it answers "did the
race show in that launch?", which is not what a page about the race needs. A kernel listed in
:data:`CENSUSES` gets a census in its run record (``census``: per-launch counts of mismatched and of
non-finite elements), taken by ``verify`` in the same child process right after the ordinary check and
timing. The census is declared here, in the evidence layer, like a group's member tolerances: the
kernels' own files stay untouched (their committed records stay fresh).

- ``expected=None``: the kernel must be exact in every launch; one mismatched element fails the record.
- ``expected="why"``: a mismatch is what the kernel exists to show (an anti-pattern's race). The record
  passes whatever the census counts -- zero included -- and pages show the counts, never a verdict on
  them. Its ordinary check is recorded as it came out (it may fail: the runner then skips the timing).

Only for kernels whose right answer is exact in the output dtype (a copy, a scaled copy): anything that
rounds differently from the float64 reference would count as mismatched. A census record is stale when
this file changes (:func:`census_hash`): the declarations and the counting live here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mla_var3.kernel.errors import UserError

if TYPE_CHECKING:
    from mla_var3.kernel.plan import KernelPlan, Shape, Tensors


@dataclass(frozen=True)
class CensusSpec:
    """How many launches to count, and why a mismatch is expected (``None``: it must not happen)."""

    launches: int
    expected: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.launches, bool) or not isinstance(self.launches, int) or self.launches < 1:
            raise UserError(f"a census needs launches >= 1 (an int), got {self.launches!r}")
        if self.expected is not None and not (isinstance(self.expected, str) and self.expected.strip()):
            raise UserError("a census's expected mismatch is a sentence saying why, or None when none may occur")


CENSUS_LAUNCHES = 200
CENSUSES: dict[str, CensusSpec] = {
    # snippets/gpu/proxy_fence_tma_store.py: plain SMEM stores handed to a TMA store.
    "tma_store_fenced": CensusSpec(CENSUS_LAUNCHES),
    "tma_store_unfenced": CensusSpec(
        CENSUS_LAUNCHES,
        "no fence.proxy.async between the plain SMEM stores and the TMA store that reads them: a race by the PTX "
        "memory model, counted, not judged",
    ),
}


def census_of(kernel: str) -> CensusSpec | None:
    """The census declared for ``kernel``, or ``None``."""
    return CENSUSES.get(kernel)


@cache
def census_hash() -> str:
    """The hash of this file (declarations and counting): a census recorded by other code is stale."""
    from mla_var3.kernel.fingerprint import source_hash

    return source_hash([Path(__file__)], ["census"])


def count_mismatches(outputs: Tensors, reference: Tensors) -> tuple[int, int]:
    """(mismatched, non-finite) elements over every output the reference names: an element mismatches
    when it is not bit-for-bit the reference rounded to the output's dtype (NaN never equals); it is
    non-finite when NaN/Inf where the reference is finite (poison never overwritten, or garbage)."""
    import torch

    missing = set(reference) - set(outputs)
    if missing:
        raise KeyError(f"outputs lack {sorted(missing)} that the reference produced")
    mismatched = nonfinite = 0
    for name, ref in reference.items():
        out = outputs[name]
        if out.shape != ref.shape:
            raise ValueError(f"output {name!r} has shape {tuple(out.shape)}, reference {tuple(ref.shape)}")
        expected = ref.to(device=out.device, dtype=out.dtype)
        mismatched += int((out != expected).sum())
        nonfinite += int((~torch.isfinite(out) & torch.isfinite(expected)).sum())
    return mismatched, nonfinite


def take_census(plan: KernelPlan, shape: Shape, arch: str, spec: CensusSpec) -> dict[str, Any]:
    """``spec.launches`` launches of ``plan`` at ``shape`` (a GPU of ``arch``), each on NaN-poisoned outputs:
    the record's ``census`` section as JSON data."""
    import torch

    from mla_var3.kernel.check import poison
    from mla_var3.kernel.compile_cache import compile_cached

    config = plan.default_config()
    compiled = compile_cached(plan, config, shape, arch, need_function=True).compiled
    kernel = plan.plan(config)
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    reference = plan.reference_fn(inputs)
    launch = kernel.bind(compiled, inputs, outputs)
    mismatched: list[int] = []
    nonfinite: list[int] = []
    on_gpu = any(t.is_cuda for t in outputs.values())
    for _ in range(spec.launches):
        poison(outputs)
        launch()
        if on_gpu:
            torch.cuda.synchronize()
        m, n = count_mismatches(outputs, reference)
        mismatched.append(m)
        nonfinite.append(n)
    return {
        "elements_per_launch": sum(t.numel() for t in reference.values()),
        "mismatched_per_launch": mismatched,
        "nonfinite_per_launch": nonfinite,
        "expected": spec.expected,
        "code_hash": census_hash(),
    }
