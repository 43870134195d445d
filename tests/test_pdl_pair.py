"""The PDL pair (``pdl_pair``, ``pdl_pair_wait_first``, ``pdl_pair_serialized``): the SASS of each
variant (``PREEXIT`` = griddepcontrol.launch_dependents, ``ACQBULK`` = griddepcontrol.wait, where they
sit among the loads), vectorized copies and no spills, the register cost of holding the prologue's
loads across the wait, the shape rules and the reference, the trace's gap arithmetic on synthetic
traces; on an H200, every variant against the reference and the gap from a real trace."""

from __future__ import annotations

from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cute_python.launch.pdl.common import MAX_N, PdlPairPlanBase
from mla_var3.kernel.cute_python.launch.pdl.overlapped.plan import PdlPairPlan
from mla_var3.kernel.cute_python.launch.pdl.serialized.plan import PdlPairSerializedPlan
from mla_var3.kernel.cute_python.launch.pdl.trace import PairGaps, pair_gaps
from mla_var3.kernel.cute_python.launch.pdl.wait_first.plan import PdlPairWaitFirstPlan
from mla_var3.kernel.errors import UnsupportedShapeError

SM90A = Arch.parse("sm_90a")
SHAPE = {"m": 1001, "n": 4096}
VARIANTS: tuple[type[PdlPairPlanBase], ...] = (PdlPairPlan, PdlPairWaitFirstPlan, PdlPairSerializedPlan)


@cache
def _cubin(plan_cls: type[PdlPairPlanBase]) -> bytes:
    from mla_var3.kernel.compile_cache import compile_cached

    plan = plan_cls()
    result = compile_cached(plan, plan.default_config(), SHAPE, SM90A, need_function=False)
    assert result.compiled.cubin is not None
    return result.compiled.cubin


def _sass_by_kernel(cubin: bytes) -> dict[str, list[str]]:
    """The mnemonics of each kernel, in program order, keyed ``scale`` / ``dot``."""
    from mla_var3.analysis.sass import disassemble

    kernels: dict[str, list[str]] = defaultdict(list)
    current = ""
    for line in disassemble(cubin).splitlines():
        if ".section" in line and ".text." in line:
            current = "scale" if "scale_kernel" in line else "dot" if "dot_kernel" in line else ""
        elif current and line.strip().startswith("/*") and "*/" in line:
            body = line.split("*/", 1)[1].strip().rstrip(" ;")
            if body:
                mnemonic = body.split()[1] if body.startswith("@") else body.split()[0]
                kernels[current].append(mnemonic)
    assert set(kernels) == {"scale", "dot"}, f"kernels found: {sorted(kernels)}"
    return kernels


def _count(ops: list[str], opcode: str) -> int:
    return sum(1 for op in ops if op.split(".")[0] == opcode)


def test_pdl_variants_carry_the_instructions_the_plain_pair_does_not() -> None:
    for plan_cls in (PdlPairPlan, PdlPairWaitFirstPlan):
        sass = _sass_by_kernel(_cubin(plan_cls))
        assert _count(sass["scale"], "PREEXIT") == 1 and _count(sass["scale"], "ACQBULK") == 0
        assert _count(sass["dot"], "ACQBULK") == 1 and _count(sass["dot"], "PREEXIT") == 0
    plain = _sass_by_kernel(_cubin(PdlPairSerializedPlan))
    assert all(_count(ops, op) == 0 for ops in plain.values() for op in ("PREEXIT", "ACQBULK"))


def _loads_before_and_after(ops: list[str], opcode: str) -> tuple[int, int]:
    at = next(i for i, op in enumerate(ops) if op.split(".")[0] == opcode)
    return ops[:at].count("LDG.E.128"), ops[at:].count("LDG.E.128")


def test_the_overlapped_consumer_loads_z_before_its_wait_and_y_after() -> None:
    # N = 4096: 16 vectors of 8 bf16 per thread and row, for z and for y.
    assert _loads_before_and_after(_sass_by_kernel(_cubin(PdlPairPlan))["dot"], "ACQBULK") == (16, 16)
    assert _loads_before_and_after(_sass_by_kernel(_cubin(PdlPairWaitFirstPlan))["dot"], "ACQBULK") == (0, 32)


def test_the_producer_triggers_before_its_first_load() -> None:
    assert _loads_before_and_after(_sass_by_kernel(_cubin(PdlPairPlan))["scale"], "PREEXIT") == (0, 16)


@pytest.mark.parametrize("plan_cls", VARIANTS, ids=lambda p: p.name)
def test_copies_are_128_bit_and_nothing_spills(plan_cls: type[PdlPairPlanBase]) -> None:
    sass = _sass_by_kernel(_cubin(plan_cls))
    assert sass["scale"].count("LDG.E.128") == 16 and sass["scale"].count("STG.E.128") == 16
    assert sass["dot"].count("LDG.E.128") == 32 and _count(sass["dot"], "SHFL") == 5  # 32-lane butterfly
    assert not any(_count(ops, op) for ops in sass.values() for op in ("LDL", "STL"))


def _registers(plan_cls: type[PdlPairPlanBase]) -> dict[str, int]:
    from mla_var3.analysis.resources import resource_usage

    return {
        ("dot" if "dot_kernel" in k.kernel else "scale"): k.registers
        for k in resource_usage(_cubin(plan_cls))
    }


def test_holding_the_z_row_across_the_wait_costs_registers() -> None:
    # Before the wait the compiler must have issued every z load and keep the 64 registers of the row;
    # without a wait in the way it streams the loads into the FFMAs.
    overlapped, first, plain = (_registers(p) for p in VARIANTS)
    assert overlapped["dot"] >= 128 > 64 >= first["dot"] == plain["dot"]
    assert overlapped["scale"] == first["scale"] == plain["scale"]


def test_a_row_of_8192_would_spill(tmp_path: Path) -> None:
    """Why ``n`` stops at 4096: the z and y rows of 8192 values do not fit in 255 registers."""
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.launch.pdl.common import _fake_rows
    from mla_var3.kernel.cute_python.launch.pdl.kernel import RowScaleThenDot
    from mla_var3.kernel.tensors import fake_dynamic_tensor

    mat, vec = (
        (lambda: _fake_rows(cutlass.BFloat16, 8192)),
        (lambda: fake_dynamic_tensor(cutlass.Float32, (1,))),
    )
    options = f"--gpu-arch sm_90a --keep-cubin --dump-dir {tmp_path}"
    compiled = cute.compile(
        RowScaleThenDot(True), mat(), vec(), mat(), mat(), vec(), cuda.CUstream(0), options=options
    )
    sass = _sass_by_kernel(compiled.artifacts.CUBIN)
    assert _count(sass["dot"], "STL") > 0 and _count(sass["dot"], "LDL") > 0
    assert MAX_N == 4096


@pytest.mark.parametrize("n", [1000, 8192])
def test_row_length_rules(n: int) -> None:
    with pytest.raises(UnsupportedShapeError, match="--n"):
        PdlPairPlan().check_shape({"m": 4, "n": n})


def test_reference_on_the_cpu() -> None:
    import torch

    x, z = torch.randn(3, 256).to(torch.bfloat16), torch.randn(3, 256).to(torch.bfloat16)
    s = torch.randn(3)
    ref = PdlPairPlan().reference_fn({"x": x, "s": s, "z": z})
    y = (x.float() * s[:, None]).to(torch.bfloat16)
    assert torch.equal(ref["y"], y)
    for i in range(3):
        assert float(ref["r"][i]) == pytest.approx(
            sum(float(y[i, j]) * float(z[i, j]) for j in range(256)), rel=1e-9
        )


def test_variants_share_the_workload() -> None:
    plans = [p() for p in VARIANTS]
    assert {p.layer for p in plans} == {"launch"} and {p.static_shape_params for p in plans} == {("n",)}
    assert {p._algorithmic_flops_bytes({"m": 8, "n": 256}) for p in plans} == {
        (3 * 8 * 256, 3 * 8 * 256 * 2 + 64)
    }
    assert [(p.use_pdl, p.overlap_prologue) for p in plans] == [(True, True), (True, False), (False, True)]


def test_registered() -> None:
    from mla_var3.kernel.registry import get_plan

    for plan_cls in VARIANTS:
        assert get_plan(plan_cls.name) is plan_cls


# --- the gap between the kernels, from a Chrome trace -----------------------------------------


def _trace(kernels: list[tuple[str, float, float]]) -> dict:
    return {
        "traceEvents": [
            {"ph": "X", "cat": "kernel", "name": f"kernel_cutlass_{name}_mla_var3", "ts": ts, "dur": dur}
            for name, ts, dur in kernels
        ]
        + [{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "ts": 0.0, "dur": 1.0}]
    }


def test_gaps_of_serialized_and_overlapped_pairs() -> None:
    serialized = _trace([("scale_kernel", 0.0, 10.0), ("dot_kernel", 12.0, 10.0), ("scale_kernel", 23.0, 10.0),
                         ("dot_kernel", 34.5, 10.0)])  # fmt: skip
    assert pair_gaps(serialized) == PairGaps(gaps_us=[2.0, 1.5], spans_us=[22.0, 21.5])
    # With PDL the consumer's first CTAs start (and wait) before the producer ends: a negative gap.
    overlapped = _trace(
        [("dot_kernel", 7.0, 14.0), ("scale_kernel", 0.0, 10.0)]
    )  # unsorted, as traces may be
    gaps = pair_gaps(overlapped)
    assert gaps.gaps_us == [-3.0] and gaps.spans_us == [21.0]
    assert gaps.summary()["gap_us"] == {"median": -3.0, "p10": -3.0, "p90": -3.0}


def test_a_trace_without_the_pair_is_an_error() -> None:
    with pytest.raises(ValueError, match="no scale_kernel -> dot_kernel pair"):
        pair_gaps(_trace([("other_kernel", 0.0, 1.0)]))


# --- on an H200 ---------------------------------------------------------------------------------


def _needs_sm90() -> None:
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")


@pytest.mark.gpu
@pytest.mark.parametrize("plan_cls", VARIANTS, ids=lambda p: p.name)
@pytest.mark.parametrize("shape", PdlPairPlan.check_shapes, ids=str)
def test_matches_reference_on_gpu(plan_cls: type[PdlPairPlanBase], shape: dict[str, int]) -> None:
    import torch

    from mla_var3.kernel.check import compare, poison

    _needs_sm90()
    plan = plan_cls()
    kernel = plan.plan(plan.default_config())
    compiled = kernel.compile(shape, SM90A)
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    poison(outputs)
    kernel.launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    result = compare(outputs, plan.reference_fn(inputs), plan.tolerance())
    assert result.passed, result.summary()


@pytest.mark.gpu
def test_pdl_shrinks_the_gap_in_a_real_trace(tmp_path: Path) -> None:
    """The numbers the next session records: median gap (consumer start - producer end) per variant
    at 4096 x 4096, printed as JSON lines (``python -m mla_var3.kernel.cute_python.launch.pdl.trace``)."""
    from mla_var3.kernel.cute_python.launch.pdl.trace import trace_pairs

    _needs_sm90()
    medians = {}
    for plan_cls in VARIANTS:
        gaps = pair_gaps(
            trace_pairs(plan_cls.name, {"m": 4096, "n": 4096}, 30, tmp_path / f"{plan_cls.name}.json")
        )
        print(plan_cls.name, gaps.summary())
        medians[plan_cls.name] = gaps.summary()["gap_us"]["median"]
    assert medians["pdl_pair"] < medians["pdl_pair_serialized"]
    assert medians["pdl_pair"] < 0, "the consumer's first CTAs should start before the producer ends"
