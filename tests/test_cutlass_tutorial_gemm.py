"""CUTLASS's Blackwell tutorial GEMMs (``fp16_gemm_0`` ... ``fp16_gemm_6``) as imported plans: each compiles
for sm_100a without spills, launches with the SMEM its budget says, and its SASS shows what its step adds."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator

import pytest

from mla_var3.kernel.arch import Arch, check_supported
from mla_var3.kernel.backends import Compiled
from mla_var3.kernel.compile_cache import CompileResult, compile_cached, host_launch_smem
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common import fake_operand, real_operand
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_0 import PLAN as STEP_0
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_1 import PLAN as STEP_1
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_2 import PLAN as STEP_2
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_3 import PLAN as STEP_3
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_3_1 import PLAN as STEP_3_1
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_4 import PLAN as STEP_4
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_5 import PLAN as STEP_5
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_6 import PLAN as STEP_6
from mla_var3.kernel.errors import ArchError, UnsupportedShapeError
from mla_var3.kernel.plan import KernelPlan
from mla_var3.kernel.upstream import EXAMPLES_ROOT, cutlass_dir

SMEM_LIMIT_SM100 = 227 * 1024  # opt-in dynamic SMEM per block on a B200
STEPS: dict[str, type[KernelPlan]] = {
    "0": STEP_0,
    "1": STEP_1,
    "2": STEP_2,
    "3": STEP_3,
    "3_1": STEP_3_1,
    "4": STEP_4,
    "5": STEP_5,
    "6": STEP_6,
}

# What each step adds (or drops), as SASS mnemonics of the pinned commit compiled by DSL 4.8.1.
SASS_OF_STEP: dict[str, tuple[set[str], set[str]]] = {
    # 1-CTA tcgen05.mma and its commit, plain TMA loads, tcgen05.ld, fp16 stores straight to global.
    "0": (
        {"UTCHMMA", "UTCBAR", "UTMALDG.2D", "LDTM.x64", "STG.E.U16"},
        {"UTCHMMA.2CTA", "UTMASTG.2D", "UCGABAR_ARV"},
    ),
    # 2-CTA MMA, multicast commit and TMA, 2-CTA TMEM allocation, the cluster barrier.
    "1": (
        {
            "UTCHMMA.2CTA",
            "UTCBAR.2CTA.MULTICAST",
            "UTMALDG.2D.MULTICAST.2CTA",
            "UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN",
            "UCGABAR_ARV",
        },
        {"UTCHMMA", "UTMALDG.2D", "UTMASTG.2D"},
    ),
    # The epilogue goes registers -> SMEM (STS.128) -> TMA store; no global stores are left.
    "2": ({"UTMASTG.2D", "STS.128", "UTCHMMA.2CTA"}, {"STG.E.U16"}),
    # The static scheduler turns a linear tile index into coordinates with fast divmod (mul-hi).
    "3": ({"UIMAD.WIDE.U32", "UTMASTG.2D"}, {"UGETNEXTWORKID.BROADCAST"}),
    # CLC: clusterlaunchcontrol.try_cancel, its 16-byte response read back from SMEM.
    "3_1": ({"UGETNEXTWORKID.BROADCAST", "LDS.128"}, {"UIMAD.WIDE.U32"}),
    "4": ({"UGETNEXTWORKID.BROADCAST"}, set()),
    # cp.async.bulk.prefetch.tensor ... L2: A/B tiles fetched into L2 ahead of the TMA loads.
    "5": ({"UTMAPF.L2.2D", "UGETNEXTWORKID.BROADCAST"}, set()),
    # griddepcontrol.wait (ACQBULK) in the GEMM; launch_dependents (PREEXIT) is in the dequantize kernel.
    "6": ({"ACQBULK", "PREEXIT", "UGETNEXTWORKID.BROADCAST"}, {"UTMAPF.L2.2D"}),
}

# The tutorials call APIs 4.8.1 marks deprecated (SmemAllocator, TmemAllocator, the CLC scheduler): not ours to fix.
pytestmark = [pytest.mark.cutlass, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def builds() -> Iterator[dict[str, CompileResult]]:
    """Every step compiled for sm_100a at its first check shape (through the compile cache, which keeps
    the launch SMEM its compile read from the host IR); the examples leave sys.modules after."""
    if not (cutlass_dir() / EXAMPLES_ROOT).is_dir():
        pytest.skip("needs third_party/cutlass (nox -s cutlass)")
    path, before = list(sys.path), set(sys.modules)
    arch = Arch.parse("sm_100a")
    try:
        yield {
            step: compile_cached(
                plan(),
                plan().default_config(),
                dict(plan.check_shapes[0]),
                arch,
                need_function=False,
                facts={"host_launch_smem": host_launch_smem},
            )
            for step, plan in STEPS.items()
        }
    finally:
        sys.path[:] = path
        examples = str((cutlass_dir() / EXAMPLES_ROOT).resolve())
        for name in set(sys.modules) - before:
            if (getattr(sys.modules[name], "__file__", None) or "").startswith(examples):
                del sys.modules[name]


@pytest.fixture(scope="module")
def compiled(builds: dict[str, CompileResult]) -> dict[str, Compiled]:
    return {step: build.compiled for step, build in builds.items()}


def _kernels(compiled: Compiled) -> dict[str, Counter[str]]:
    from mla_var3.analysis.sass import disassemble, parse_sass

    assert compiled.cubin is not None
    return {name: Counter(mnemonics) for name, mnemonics in parse_sass(disassemble(compiled.cubin)).items()}


def _histogram(compiled: Compiled) -> Counter[str]:
    return sum(_kernels(compiled).values(), Counter())


def test_registered_for_sm100a_fp16_only() -> None:
    from mla_var3.kernel.registry import get_plan

    for step, plan in STEPS.items():
        assert plan.name == f"cutlass_fp16_gemm_{step}" and get_plan(plan.name) is plan
        assert plan.archs == ("sm_100a",) and plan.dtypes == ("float16",) and plan.layer == "gemm"
        assert plan.upstream_example().endswith(f"tutorial_gemm/fp16_gemm_{step}.py")


@pytest.mark.parametrize("step", list(STEPS))
def test_compiles_without_spills_and_launches_its_smem_budget(
    builds: dict[str, CompileResult], step: str
) -> None:
    from mla_var3.analysis.resources import resource_usage

    result = builds[step].compiled
    for kernel in resource_usage(result.cubin):
        assert 0 < kernel.registers <= 255 and kernel.local_bytes == 0 and kernel.stack_bytes == 0, kernel
    # The budget from the module constants is what the DSL lowered into the host's launch code.
    assert result.dynamic_smem_bytes is not None and result.dynamic_smem_bytes <= SMEM_LIMIT_SM100
    # Every launch, in order: step 6 first launches its dequantize kernel, which takes no dynamic SMEM.
    launches = [0, result.dynamic_smem_bytes] if step == "6" else [result.dynamic_smem_bytes]
    assert builds[step].facts["host_launch_smem"] == launches


@pytest.mark.parametrize("step", list(SASS_OF_STEP))
def test_sass_shows_what_the_step_adds(compiled: dict[str, Compiled], step: str) -> None:
    present, absent = SASS_OF_STEP[step]
    hist = _histogram(compiled[step])
    assert {m for m in present if not hist[m]} == set(), step
    assert {m for m in absent if hist[m]} == set(), step


def test_preferred_and_fallback_clusters_compile_two_bodies(compiled: dict[str, Compiled]) -> None:
    """fp16_gemm_4 calls one @cute.jit body per cluster shape from a single kernel: twice the MMAs and CLC queries."""
    one, two = _histogram(compiled["3_1"]), _histogram(compiled["4"])
    for mnemonic in ("UTCHMMA.2CTA", "UGETNEXTWORKID.BROADCAST", "UTMASTG.2D"):
        assert two[mnemonic] == 2 * one[mnemonic] > 0, mnemonic
    assert len(_kernels(compiled["4"])) == 1


def test_pdl_wait_and_launch_dependents_sit_in_their_kernels(compiled: dict[str, Compiled]) -> None:
    kernels = _kernels(compiled["6"])
    (gemm,) = (h for name, h in kernels.items() if "_gemm_" in name)
    (dequantize,) = (h for name, h in kernels.items() if "_dequantize_" in name)
    assert gemm["ACQBULK"] == 1 and not gemm["PREEXIT"]  # griddepcontrol.wait, once, before B is loaded
    assert dequantize["PREEXIT"] == 1 and not dequantize["ACQBULK"]  # griddepcontrol.launch_dependents
    assert not _histogram(compiled["3_1"])["ACQBULK"]


@pytest.mark.parametrize("divisibility", [None, 520])
def test_fake_operands_are_typed_like_the_marked_tensors(divisibility: int | None) -> None:
    import cutlass
    import torch
    from cutlass._mlir import ir

    with ir.Context():
        fake = str(fake_operand(cutlass.Float16, divisibility).mlir_type)
        real = str(real_operand(torch.empty((256, 520), dtype=torch.float16), divisibility).mlir_type)
    assert real.replace("generic", "gmem") == fake


def test_sm90a_is_refused_with_one_clean_message() -> None:
    for plan in STEPS.values():
        with pytest.raises(
            ArchError, match=r"does not support sm_90a; it supports sm_100a \(pass --arch sm_100a\)"
        ):
            check_supported(plan.name, plan.archs, "sm_90a")


@pytest.mark.parametrize(
    ("plan", "shape", "message"),
    [
        (STEP_0, {"m": 128, "n": 128, "k": 64}, r"--n \(=128\) to be a multiple of 256"),
        (STEP_1, {"m": 128, "n": 256, "k": 64}, r"--m \(=128\) to be a multiple of 256"),
        (
            STEP_3,
            {"m": 256, "n": 256, "k": 60},
            r"--k \(=60, the row length of A and B\) to be a multiple of 8",
        ),
        (STEP_6, {"m": 256, "n": 256, "k": 64}, r"--k \(=64\) to be a multiple of 128"),
    ],
)
def test_shapes_a_step_cannot_take(plan: type[KernelPlan], shape: dict[str, int], message: str) -> None:
    with pytest.raises(UnsupportedShapeError, match=message):
        plan().validate_shape(shape)
