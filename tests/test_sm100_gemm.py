"""``sm100_gemm_tcgen05``: compiles for sm_100a with tcgen05 and TMA in its SASS; rejects other archs and bad shapes."""

from __future__ import annotations

import pytest

from mla_var3.kernel.arch import Arch, check_supported
from mla_var3.kernel.compile_cache import compile_cached
from mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05 import PLAN
from mla_var3.kernel.errors import ArchError, UnsupportedShapeError
from mla_var3.kernel.registry import get_plan

SMEM_LIMIT_SM100 = 227 * 1024  # opt-in dynamic SMEM per block on B200


pytestmark = pytest.mark.usefixtures("fresh_compile_cache")


def test_registered_for_sm100a_only() -> None:
    assert get_plan("sm100_gemm_tcgen05") is PLAN
    assert PLAN.archs == ("sm_100a",) and PLAN.layer == "gemm" and set(PLAN.dtypes) == {"float16", "bfloat16"}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("config_index", [0, 1])
def test_compiles_for_sm100a_with_tcgen05_and_tma(dtype: str, config_index: int) -> None:
    plan = PLAN(dtype)
    config = plan._autotune_configs()[config_index]
    result = compile_cached(
        plan, config, {"m": 4096, "n": 4096, "k": 4096}, Arch.parse("sm_100a"), need_function=False
    )
    assert result.source == "compile" and result.cold_s < 10
    analysis = result.analysis
    assert analysis is not None
    hist, classes = analysis.sass.histogram, analysis.sass.classes
    assert hist.get("UTCHMMA", 0) > 0  # tcgen05.mma, f16/bf16 kind
    assert sum(n for m, n in hist.items() if m.startswith("UTMALDG")) > 0  # TMA loads
    assert hist.get("UTCBAR", 0) > 0 and hist.get("LDTM.x64", 0) > 0  # tcgen05.commit, tcgen05.ld
    for name in ("tcgen05_mma", "tcgen05_commit", "tmem_alloc", "tmem_copy", "tma_load", "mbarrier"):
        assert classes.get(name, 0) > 0, name
    assert "wgmma" not in classes and "mma_sync" not in classes
    (kernel,) = analysis.resources
    assert kernel.registers <= 255 and kernel.local_bytes == 0 and kernel.stack_bytes == 0
    expected_smem = plan.make_kernel(config).budget.total  # 1 KiB header + stages x (A + B) tiles
    assert expected_smem == 1024 + config["stages"] * (128 + config["mma_tiler_mn"][1]) * 64 * 2
    assert analysis.dynamic_smem_bytes == expected_smem <= SMEM_LIMIT_SM100


def test_reported_smem_is_the_launch_smem() -> None:
    """The SMEM the plan reports equals the size the DSL lowered into the host launch code."""
    plan = PLAN("float16")
    config = plan.default_config()
    compiled = plan.plan(config).compile({"m": 128, "n": 256, "k": 64}, Arch.parse("sm_100a"))
    expected = plan.make_kernel(config).budget.total
    assert compiled.dynamic_smem_bytes == expected
    assert f"llvm.mlir.constant({expected} : i64)" in str(compiled.fn.ir_module)


def test_sm90a_is_refused_with_one_clean_message(capsys: pytest.CaptureFixture[str]) -> None:
    from mla_var3.kernel.cli import main

    with pytest.raises(
        ArchError, match=r"does not support sm_90a; it supports sm_100a \(pass --arch sm_100a\)"
    ):
        check_supported(PLAN.name, PLAN.archs, "sm_90a")
    assert main(["sm100_gemm_tcgen05", "--compile-only", "--arch", "sm_90a"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: kernel 'sm100_gemm_tcgen05' does not support sm_90a; it supports sm_100a (pass --arch sm_100a)"
    ]


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ({"m": 100, "n": 256, "k": 64}, r"--m \(=100\) to be a multiple of 128"),
        ({"m": 128, "n": 256, "k": 60}, r"--k \(=60, the row length of A and B\) to be a multiple of 8"),
        ({"m": 128, "n": 0, "k": 64}, r"--n >= 1"),
    ],
)
def test_shapes_it_cannot_take(shape: dict[str, int], message: str) -> None:
    with pytest.raises(UnsupportedShapeError, match=message):
        PLAN("float16").check_shape(shape)


def test_n_must_be_a_multiple_of_the_configs_tile() -> None:
    plan = PLAN("float16")
    shape = {"m": 128, "n": 384, "k": 64}
    plan.validate_shape(shape)  # 384 is fine for the 128-wide tile ...
    kernel = plan.plan(plan._autotune_configs()[0])
    with pytest.raises(
        UnsupportedShapeError, match=r"'mma_tiler_mn': \(128, 256\).* needs --n \(=384\) to be a multiple of 256"
    ):
        kernel.compile_args(shape)  # ... but not for the 256-wide one
    for check in PLAN.check_shapes:
        for config in plan._autotune_configs():
            plan.validate_shape(check)
            assert check["n"] % config["mma_tiler_mn"][1] == 0


def test_rejects_tiles_the_epilogue_cannot_store() -> None:
    from mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05.kernel import Sm100GemmTcgen05

    for tile in [(64, 256), (128, 96), (128, 512)]:
        with pytest.raises(ValueError, match="mma_tiler_mn"):
            Sm100GemmTcgen05(mma_tiler_mn=tile)
