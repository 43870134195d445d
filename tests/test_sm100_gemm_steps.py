"""Our SM100 GEMM steps compile for sm_100a with the SASS that proves each step, and refuse sm_90a.

One compile per step (default config, one shape), on the CPU: no SM100 GPU here, so numerics are
unverified. Each step must show what it adds over the one before:

- ``two_cta``: the pair's forms (``UTCHMMA.2CTA``, ``UTCBAR.2CTA.MULTICAST``, a ``.2CTA`` TMEM
  allocation) and, on its 2 x 2 cluster, A loaded with ``UTMALDG...MULTICAST.2CTA``;
- ``ws_tma_store``: the epilogue through SMEM (``STS.128``) and ``UTMASTG``, no global stores;
- ``persistent_static``: the schedule's start at ``blockIdx.z`` (``SR_CTAID.Z``) and its
  division of the linear tile index (``MUFU.RCP``);
- ``persistent_clc``: the CLC query ``UGETNEXTWORKID``, and no static schedule;
- ``tmem_double_buffer``: twice the TMEM columns in the allocation and two more mbarriers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mla_var3.analysis import CubinAnalysis, analyze_cubin, disassemble
from mla_var3.kernel.arch import Arch, check_supported
from mla_var3.kernel.errors import ArchError, UnsupportedShapeError
from mla_var3.kernel.registry import get_plan

STEPS = (
    "sm100_gemm_two_cta",
    "sm100_gemm_ws_tma_store",
    "sm100_gemm_persistent_static",
    "sm100_gemm_persistent_clc",
    "sm100_gemm_tmem_double_buffer",
)
SHAPE = {"m": 512, "n": 1024, "k": 512}  # a multiple of every default config's cluster tile
SMEM_CAPACITY = 232448  # 227 KiB: opt-in dynamic SMEM per block on SM100 (cutlass.memory says the same)
TMEM_GRANULE = 32  # tcgen05.alloc counts columns in units of 32 (UTCATOMSWS's operand)


@dataclass(frozen=True)
class Build:
    kernel: object  # the step's kernel object (budget, stages)
    analysis: CubinAnalysis
    sass: str
    host_ir: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Build]]:
    """Each step compiled once for sm_100a (in a temporary folder: the DSL writes cubins to the cwd)."""
    builds: dict[str, Build] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("sm100-steps"))
        for name in STEPS:
            plan = get_plan(name)("float16")
            config = plan.default_config()
            compiled = plan.plan(config).compile(SHAPE, Arch.parse("sm_100a"))
            assert compiled.cubin is not None
            analysis = analyze_cubin(compiled.cubin, "sm_100a", compiled.dynamic_smem_bytes)
            builds[name] = Build(
                plan.make_kernel(config), analysis, disassemble(compiled.cubin), str(compiled.fn.ir_module)
            )
        yield builds


def hist(build: Build, prefix: str) -> dict[str, int]:
    return {k: v for k, v in build.analysis.sass.histogram.items() if k.startswith(prefix)}


def tmem_alloc_columns(sass: str) -> int:
    """The columns the first ``tcgen05.alloc`` asks for: the immediate moved into its count register."""
    lines = [line.split("*/", 1)[-1].strip() for line in sass.splitlines()]
    alloc = next(i for i, line in enumerate(lines) if "UTCATOMSWS" in line and "FIND_AND_SET" in line)
    count_reg = re.search(r"UTCATOMSWS\S*\s+\w+,\s*(UR\d+)", lines[alloc]).group(1)
    for line in reversed(lines[:alloc]):
        if match := re.match(rf"UMOV {count_reg}, (0x[0-9a-f]+)", line):
            return int(match.group(1), 16) * TMEM_GRANULE
    raise AssertionError("no immediate column count before the TMEM allocation")


def test_steps_are_registered_for_sm100a_only() -> None:
    for name in STEPS:
        plan = get_plan(name)
        assert plan.archs == ("sm_100a",) and plan.layer == "gemm" and set(plan.dtypes) == {"float16", "bfloat16"}


@pytest.mark.parametrize("name", STEPS)
def test_step_compiles_on_a_cta_pair_without_spills(built: dict[str, Build], name: str) -> None:
    build = built[name]
    (kernel,) = build.analysis.resources
    assert 0 < kernel.registers <= 255 and kernel.local_bytes == 0 and kernel.stack_bytes == 0
    assert not hist(build, "LDL") and not hist(build, "STL")
    assert hist(build, "UTCHMMA") == {"UTCHMMA.2CTA": 12}  # the pair's MMA only, never a 1-CTA one
    assert "UTCBAR.2CTA.MULTICAST" in hist(build, "UTCBAR")  # the leader's commit reaches both CTAs
    assert "UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN" in hist(build, "UTCATOMSWS")  # TMEM for the pair
    assert all(".2CTA" in op for op in hist(build, "UTMALDG"))  # each CTA loads its half


@pytest.mark.parametrize("name", STEPS)
def test_smem_budget_is_the_launch_smem(built: dict[str, Build], name: str) -> None:
    """The budget computed in Python (header + stages x stage + C ring) is what the launch requests."""
    build = built[name]
    budget = build.kernel.budget
    assert budget.total == 1024 + budget.ab_stages * budget.ab_stage_bytes + budget.c_bytes
    assert budget.total <= SMEM_CAPACITY < budget.total + budget.ab_stage_bytes  # as many stages as fit
    assert build.analysis.dynamic_smem_bytes == budget.total
    assert f"llvm.mlir.constant({budget.total} : i64)" in build.host_ir


def test_two_cta_pairs_and_multicasts_a(built: dict[str, Build]) -> None:
    build = built["sm100_gemm_two_cta"]
    assert build.kernel.cluster_mn == (2, 2)  # A is shared by the cluster's two CTA columns
    assert hist(build, "UTMALDG") == {"UTMALDG.2D.MULTICAST.2CTA": 4, "UTMALDG.2D.2CTA": 4}
    assert build.kernel.budget.ab_stages == 7  # 32 KiB stages: half of B per CTA
    assert "LDTM.x64" in hist(build, "LDTM") and "STG.E.128" in hist(build, "STG")  # direct store
    assert not hist(build, "UTMASTG")


def test_ws_tma_store_goes_through_smem(built: dict[str, Build]) -> None:
    build = built["sm100_gemm_ws_tma_store"]
    assert hist(build, "UTMASTG") == {"UTMASTG.2D": 1}  # warp 0 of the epilogue stores each subtile
    assert "STS.128" in hist(build, "STS") and "LDTM.x32" in hist(build, "LDTM")
    assert not hist(build, "STG")  # no global stores from registers any more
    assert build.kernel.budget.ab_stages == 6  # the 16 KiB C ring costs one A/B stage
    assert "SR_CTAID.Z" not in build.sass and "UGETNEXTWORKID" not in build.sass


def test_persistent_static_walks_a_fixed_schedule(built: dict[str, Build]) -> None:
    build = built["sm100_gemm_persistent_static"]
    assert "SR_CTAID.Z" in build.sass  # the first cluster tile is blockIdx.z ...
    assert "MUFU.RCP" in build.sass  # ... and the linear index is divided by the clusters along M
    assert "UGETNEXTWORKID" not in build.sass and "UTMASTG.2D" in hist(build, "UTMASTG")


def test_persistent_clc_asks_the_hardware(built: dict[str, Build]) -> None:
    build = built["sm100_gemm_persistent_clc"]
    assert hist(build, "UGETNEXTWORKID") == {"UGETNEXTWORKID.BROADCAST": 1}  # try_cancel, multicast
    assert "SR_CTAID.Z" not in build.sass and "MUFU.RCP" not in build.sass  # no static schedule
    assert build.kernel.warps == 7  # the scheduler warp


def test_tmem_double_buffer_allocates_two_stages(built: dict[str, Build]) -> None:
    single, double = built["sm100_gemm_persistent_clc"], built["sm100_gemm_tmem_double_buffer"]
    assert tmem_alloc_columns(single.sass) == 256 and tmem_alloc_columns(double.sass) == 512
    # Two more mbarriers initialized: the second accumulator stage's full and empty barrier.
    assert double.analysis.sass.histogram["SYNCS.EXCH.64"] == single.analysis.sass.histogram["SYNCS.EXCH.64"] + 2
    assert "UGETNEXTWORKID.BROADCAST" in hist(double, "UGETNEXTWORKID")


def test_direct_store_steps_allocate_the_accumulator_only(built: dict[str, Build]) -> None:
    assert tmem_alloc_columns(built["sm100_gemm_two_cta"].sass) == 256
    assert tmem_alloc_columns(built["sm100_gemm_ws_tma_store"].sass) == 256


@pytest.mark.parametrize("name", STEPS)
def test_sm90a_is_refused_with_one_clean_message(name: str) -> None:
    with pytest.raises(ArchError, match=r"does not support sm_90a; it supports sm_100a \(pass --arch sm_100a\)"):
        check_supported(name, get_plan(name).archs, "sm_90a")


def test_cli_refuses_sm90a_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from mla_var3.kernel.cli import main

    assert main(["sm100_gemm_persistent_clc", "--compile-only", "--arch", "sm_90a"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: kernel 'sm100_gemm_persistent_clc' does not support sm_90a; it supports sm_100a "
        "(pass --arch sm_100a)"
    ]


def test_shapes_must_fill_the_cluster_tile() -> None:
    plan = get_plan("sm100_gemm_two_cta")("float16")
    kernel = plan.plan(plan.default_config())
    with pytest.raises(UnsupportedShapeError, match=r"needs --n \(=256\) to be a multiple of 512"):
        kernel.compile_args({"m": 256, "n": 256, "k": 64})  # the 2 x 2 cluster spans 512 columns
    with pytest.raises(UnsupportedShapeError, match=r"--m \(=200\) to be a multiple of 128"):
        plan.check_shape({"m": 200, "n": 512, "k": 64})
    for name in STEPS:
        step = get_plan(name)("float16")
        for shape in step.check_shapes:
            for config in step._autotune_configs():
                step.check_config_shape(shape, config)


def test_bad_tiles_are_refused_by_the_kernel() -> None:
    from mla_var3.kernel.cute_python.gemm.sm100_gemm.two_cta.kernel import Sm100GemmTwoCta

    with pytest.raises(ValueError, match="mma_tiler_mn must be \\(256, N\\)"):
        Sm100GemmTwoCta(mma_tiler_mn=(128, 256))
    with pytest.raises(ValueError, match="cluster_mn must have an M extent divisible by 2"):
        Sm100GemmTwoCta(cluster_mn=(1, 2))
