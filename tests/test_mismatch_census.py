"""The mismatch census (mla_var3/evidence/census.py) and run records whose check failed: the record a race's
kernel gets (its counts, not a verdict), the record a failing kernel gets (written, failed), both on the CPU.

The H200 case that motivated it: ``verify --only tma_store_unfenced/m8192-n8192-float32`` stopped with
"a run record needs correctness, ceilings and clocks" -- the runner skips timing, ceilings and clocks after
a failed check, and the model refused the record it could not have, so no failing run could be recorded."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch

from mla_var3.evidence import census as census_mod
from mla_var3.evidence import provenance
from mla_var3.evidence.census import CENSUSES, CensusSpec, census_hash, count_mismatches, take_census
from mla_var3.evidence.model import Record
from mla_var3.evidence.render import _census_line, record_value
from mla_var3.evidence.status import record_staleness
from mla_var3.evidence.typed import EvidenceError, dump, parse
from mla_var3.evidence.verify import census_line
from mla_var3.kernel.backends import TorchKernel
from mla_var3.kernel.errors import UserError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.registry import all_plans

H200 = {"name": "NVIDIA H200", "slug": "nvidia-h200", "uuid": "096f7439-510b-d6b7-3771-81876b5f826a", "cc": "9.0"}


def run_result(check_passed: bool, census: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``run_kernel_child`` returns for a run: a failed check leaves timing, ceilings and clocks out, as
    ``mla_var3.kernel.runner._run_on_gpu`` does."""
    y = {"name": "y", "elements": 64, "rel_l2": 0.0 if check_passed else float("inf"), "max_abs": 0.0 if check_passed else 3.0,
         "nonfinite": 0 if check_passed else 5, "tolerance": 16.0, "passed": check_passed}  # fmt: skip
    sample = {"sm_mhz": 1500.0, "power_w": 600.0}
    result = {
        "kernel": "tma_store_unfenced", "shape_key": "m512-n128-float32", "config": {}, "mode": "run", "arch": "sm_90a",
        "mode_reason": "NVIDIA H200 (sm_90) runs sm_90a", "backend": "cute", "dtype": "float32", "shape": {"m": 512, "n": 128},
        "data": "randn", "date": "2026-12-01T00:00:00+00:00", "device": H200,
        "compile": {"source": "compile", "warm": False, "seconds": 1.0, "key": "k", "entry": "x"},
        "analysis": None, "flops": 65536, "bytes": 524288, "notes": [] if check_passed else ["check failed: timing skipped"],
        "check": {"passed": check_passed, "outputs": [y]},
        "timing": None, "ceilings": None, "clocks": None,
    }  # fmt: skip
    if check_passed:
        result |= {
            "timing": {"median_us": 10.0, "p10_us": 9.0, "p90_us": 11.0, "mean_us": 10.0, "n": 200, "warmup": 20, "input_sets": 1},
            "ceilings": [{"name": "copy", "kind": "memory", "value": 4.2e12, "method": "copy"}],
            "clocks": {"before": sample, "after": sample},
        }  # fmt: skip
    if census is not None:
        result["census"] = census
    return result


def census_data(mismatched: list[int], nonfinite: list[int], expected: str | None) -> dict[str, Any]:
    return {"elements_per_launch": 64, "mismatched_per_launch": mismatched, "nonfinite_per_launch": nonfinite,
            "expected": expected, "code_hash": census_hash()}  # fmt: skip


def build(result: dict[str, Any]) -> Record:
    source = provenance.kernel_source_hash("tma_store_unfenced")
    return provenance.record_from_run(result, source, provenance.harness_hash(), "0123456789", None)


def test_a_run_whose_check_failed_becomes_a_failed_record_not_an_error() -> None:
    record = build(run_result(check_passed=False))  # raised "a run record needs correctness, ceilings and clocks"
    assert record.mode == "run" and not record.passed and record.timing is None and record.clocks is None
    assert record.correctness is not None and record.correctness.outputs[0].nonfinite == 5
    assert "failed its check" in "\n".join(_census_line(record))
    # A passing check still needs its timing, ceilings and clocks.
    broken = run_result(check_passed=True) | {"clocks": None}
    with pytest.raises(EvidenceError, match="whose check passed needs timing, ceilings and clocks"):
        build(broken)
    with pytest.raises(EvidenceError, match="a run record needs correctness"):
        build(run_result(check_passed=True) | {"check": None})


def test_an_expected_mismatch_is_recorded_with_its_counts_and_passes_as_evidence() -> None:
    why = CENSUSES["tma_store_unfenced"].expected
    record = build(run_result(False, census_data([7, 0, 3], [5, 0, 0], why)))
    assert record.passed and not record.correctness.passed  # type: ignore[union-attr]
    c = record.census
    assert c is not None and (c.launches, c.mismatched, c.nonfinite, c.launches_with_mismatch) == (3, 10, 5, 2)
    assert record_value(record, "census.mismatched") == (10.0, "")
    assert record_value(record, "census.mismatched_fraction") == pytest.approx((100 * 10 / 192, " %"))
    assert record_value(record, "census.launches") == (3.0, "")
    line = "\n".join(_census_line(record))
    assert "10 of 192 elements differed" in line and "in 2 of 3 launches" in line and "5 of them non-finite" in line
    assert "A mismatch is expected" in line and "failed its check" in line
    assert census_line(record) == "; census: 10 of 192 elements mismatched in 2 of 3 launches (expected)"
    assert parse(Record, dump(record), "again") == record  # derived counts are written, recomputed on load


def test_a_census_that_demands_exactness_fails_the_record_on_one_element() -> None:
    exact = build(run_result(True, census_data([0, 0], [0, 0], None)))
    assert exact.passed and exact.timing is not None
    one = build(run_result(True, census_data([0, 1], [0, 0], None)))
    assert not one.passed and "None may occur" in "\n".join(_census_line(one))


@pytest.mark.parametrize(
    ("mismatched", "nonfinite", "message"),
    [([], [], "at least one launch"), ([1, 2], [0], "one count per launch"), ([1], [2], "0 <= nonfinite (2) <= mismatched (1)"),
     ([65], [0], "<= elements_per_launch")],
)  # fmt: skip
def test_inconsistent_census_counts_are_refused(mismatched: list[int], nonfinite: list[int], message: str) -> None:
    with pytest.raises(EvidenceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(run_result(False, census_data(mismatched, nonfinite, "a race")))


def test_a_census_from_other_census_code_is_stale() -> None:
    record = build(run_result(False, census_data([1], [0], "a race")))
    assert record_staleness(record) is None
    moved = dataclasses.replace(record, census=dataclasses.replace(record.census, code_hash="0" * 64))  # type: ignore[type-var]
    assert record_staleness(moved) == "the mismatch census (mla_var3/evidence/census.py) changed"


def test_a_compile_record_has_no_census() -> None:
    data = dump(build(run_result(False, census_data([1], [0], "a race"))))
    data |= {"mode": "compile", "device_slug": "compile-sm_90a", "device": {"compiled_on": "cpu"}, "harness_hash": None}
    with pytest.raises(EvidenceError, match="a compile record has none"):
        parse(Record, data, "compile")


def test_count_mismatches_is_exact_and_counts_poison_left() -> None:
    ref = {"y": 2.0 * torch.randn(4, 8, dtype=torch.float64)}
    out = {"y": ref["y"].float().clone()}
    assert count_mismatches(out, ref) == (0, 0)
    out["y"][0, 0] = float("nan")  # never written
    out["y"][1, 2] = torch.nextafter(out["y"][1, 2], torch.tensor(float("inf")))  # one ulp off
    out["y"][3, 7] = out["y"][2, 7]  # another element's value: what a lost race writes
    assert count_mismatches(out, ref) == (3, 1)
    with pytest.raises(KeyError, match="outputs lack"):
        count_mismatches({}, ref)


class _EveryThirdLaunchWrong(KernelPlan):
    """A torch-backend copy that writes one wrong element on every third launch and leaves one unwritten on
    the first: the census must count exactly that."""

    name = "census_fixture"
    layer = "memory"
    archs = ("sm_90a",)
    dtypes = ("float32",)
    backend = "torch"
    shape_params = (ShapeParam("n", 16, "elements"),)

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"x": torch.randn(shape["n"])}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        return {"y": torch.empty_like(inputs["x"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"y": inputs["x"].double()}

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        return 0, 8 * shape["n"]

    def plan(self, config: Config) -> TorchKernel:
        launches = [0]

        def copy(inputs: Tensors, outputs: Tensors) -> None:
            k = launches[0]
            launches[0] += 1
            outputs["y"][1:] = inputs["x"][1:]
            if k > 0:
                outputs["y"][0] = inputs["x"][0]
            if k % 3 == 2:
                outputs["y"][5] = inputs["x"][6]

        return TorchKernel(fn=copy)


def test_take_census_counts_every_launch() -> None:
    data = take_census(_EveryThirdLaunchWrong(), {"n": 16}, "sm_90a", CensusSpec(6, "a fixture"))
    assert data["mismatched_per_launch"] == [1, 0, 1, 0, 0, 1]
    assert data["nonfinite_per_launch"] == [1, 0, 0, 0, 0, 0]
    assert (data["elements_per_launch"], data["expected"], data["code_hash"]) == (16, "a fixture", census_hash())


def test_census_declarations_name_registered_plans_and_refuse_nonsense() -> None:
    plans = all_plans()
    assert set(CENSUSES) <= set(plans)
    assert CENSUSES["tma_store_fenced"].expected is None and CENSUSES["tma_store_unfenced"].expected
    for bad in (0, -1, True, 2.5):
        with pytest.raises(UserError, match="launches >= 1"):
            CensusSpec(bad)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="a sentence saying why"):
        CensusSpec(10, " ")
    assert census_mod.census_of("copy_row_walk") is None
