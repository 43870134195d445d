"""row_reduce (sum and max per row, fp32 out) and its torch baseline: the reference, the tiling policy,
the SASS of the one-CTA and cluster paths for sm_90a, and, on the H200, both against the float64
reference at odd shapes (a tail column tile, one-element copies, clusters of 4 and 8)."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from mla_var3.kernel.cute_python.reduction.row_reduce.cluster.plan import RowReducePlan
from mla_var3.kernel.torch_ref.reduction.row_reduce.sum_amax.plan import TorchRowReducePlan


def test_torch_baseline_matches_the_reference_on_cpu() -> None:
    plan = TorchRowReducePlan()
    inputs = {"x": torch.randn(7, 1000).bfloat16()}
    outputs = {"sum": torch.empty(7), "max": torch.empty(7)}
    plan.plan({}).fn(inputs, outputs)
    ref = plan.reference_fn(inputs)
    for key in ("sum", "max"):
        assert float((outputs[key].double() - ref[key]).norm() / ref[key].norm()) <= plan.tolerance()


def test_tiling_clusters_rows_over_16k_columns() -> None:
    plan = RowReducePlan()
    config = plan.default_config()
    tilings = {n: plan.tiling(n, config) for n in (1000, 4096, 16384, 65536, 131072)}
    assert {n: t.cluster_n for n, t in tilings.items()} == {1000: 1, 4096: 1, 16384: 1, 65536: 4, 131072: 8}
    assert all(t.cols_per_cta * t.cluster_n >= n for n, t in tilings.items())
    assert tilings[1000].rows_per_cta > 1 and not tilings[1000].even


def _ops(shape: dict[str, int], dtype: str = "bfloat16") -> tuple[Counter[str], int]:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.analysis.sass import disassemble, parse_sass
    from mla_var3.kernel.compile_cache import compile_cached

    plan = RowReducePlan(dtype)
    compiled = compile_cached(plan, plan.default_config(), shape, "sm_90a", need_function=False).compiled
    ops: Counter[str] = Counter()
    for mnemonics in parse_sass(disassemble(compiled.cubin)).values():
        ops.update(mnemonics)
    return ops, max(r.local_bytes for r in resource_usage(compiled.cubin))


def test_one_cta_path_is_vector_loads_and_shuffles() -> None:
    ops, local = _ops({"m": 32768, "n": 4096})
    assert ops["LDG.E.128"] == 4 and ops["SHFL.BFLY"] == 20  # 5 butterfly steps, 2 values, 2 levels
    assert ops["STAS"] == 0 and local == 0


def test_cluster_path_sends_both_partials_through_dsmem() -> None:
    ops, local = _ops({"m": 4096, "n": 65536})
    assert ops["STAS"] == 2  # the sum and the max, one st.async each, lane r to CTA r
    assert ops["SYNCS.ARRIVE.TRANS64"] == 1 and ops["SYNCS.PHASECHK.TRANS64.TRYWAIT"] >= 1
    assert ops["UCGABAR_ARV"] == ops["UCGABAR_WAIT"] == 1
    assert ops["SHFL.BFLY"] >= 10 and local == 0


@pytest.mark.gpu
@pytest.mark.parametrize("plan_cls", [RowReducePlan, TorchRowReducePlan], ids=lambda p: p.name)
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize(
    "shape",
    [
        {"m": 199, "n": 1000},
        {"m": 1, "n": 4097},
        {"m": 199, "n": 65536},
        {"m": 3, "n": 131072},
        {"m": 5, "n": 40000},
    ],
    ids=str,
)
def test_matches_reference_on_gpu(plan_cls: type, dtype: str, shape: dict[str, int]) -> None:
    from mla_var3.kernel.arch import Arch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = plan_cls(dtype)
    kernel = plan.plan(plan.default_config())
    compiled = kernel.compile(shape, Arch.parse("sm_90a"))
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    for out in outputs.values():
        out.fill_(float("nan"))
    kernel.launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    ref = plan.reference_fn(inputs)
    for key in ("sum", "max"):
        assert torch.isfinite(outputs[key]).all(), f"some of {key} was not written"
        assert float((outputs[key].double() - ref[key]).norm() / ref[key].norm()) <= plan.tolerance(), key
