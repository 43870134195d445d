"""CUTLASS's SM100 MLA decode (fp16, fp8) and FMHA, imported: they compile for sm_100a with the SASS that
proves their design, the split-KV choice decides whether the reduction kernel exists, the tensors a launch
would pass have the types the compile assumed, and other archs and shapes are refused cleanly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mla_var3.kernel.arch import Arch, check_supported
from mla_var3.kernel.compile_cache import CompileResult, compile_cached
from mla_var3.kernel.errors import ArchError, UnsupportedShapeError
from mla_var3.kernel.registry import get_plan
from mla_var3.kernel.workloads.mla import mla_shape

SM100 = Arch.parse("sm_100a")
SMEM_LIMIT_SM100 = 227 * 1024  # opt-in dynamic SMEM per block on B200
PLANS = ("cutlass_mla_decode_fp16", "cutlass_mla_decode_fp8", "cutlass_fmha_sm100")
FMHA_SHAPE = {"b": 2, "s": 1000, "t": 1000, "h": 16, "hk": 4, "d": 128, "causal": 1}


# The examples bring their siblings (``helpers``, ``cute``) into sys.modules and their root onto sys.path.
pytestmark = pytest.mark.usefixtures("module_restored_imports")


def _compile(name: str, shape: dict[str, int]) -> CompileResult:
    plan = get_plan(name)()
    plan.validate_shape(shape)
    result = compile_cached(plan, plan.default_config(), shape, SM100, need_function=False)
    assert result.analysis is not None
    return result


def _count(histogram: dict[str, int], prefix: str) -> int:
    return sum(n for mnemonic, n in histogram.items() if mnemonic.startswith(prefix))


def test_registered_for_sm100a_only() -> None:
    layers = {name: get_plan(name).layer for name in PLANS}
    assert layers == {
        "cutlass_mla_decode_fp16": "mla",
        "cutlass_mla_decode_fp8": "mla",
        "cutlass_fmha_sm100": "attention",
    }
    for name in PLANS:
        assert get_plan(name).archs == ("sm_100a",)
    assert get_plan("cutlass_mla_decode_fp8").dtypes == ("float8_e4m3fn",)


@pytest.mark.cutlass
def test_split_kv_follows_the_sm_count() -> None:
    """get_split_kv over a B200's 74 clusters of 2: a full batch needs no split, small batches do."""
    from mla_var3.kernel.cute_python.mla.cutlass_mla.common import choose_split
    from mla_var3.kernel.upstream import load_example

    plan = get_plan("cutlass_mla_decode_fp16")()
    example_cls = getattr(load_example(plan.example_file), plan.example_class)
    config = plan.default_config()

    def split(b: int, h: int = 128, t: int = 8192) -> int:
        return choose_split(example_cls, b, 1, h, [t] * b, config).split_kv

    assert split(128) == 1 and split(4) == 16 and split(1) == 32  # capped at 32 splits
    assert split(4, h=64) == 1  # can_implement allows splits only with 128 heads
    assert choose_split(example_cls, 128, 1, 128, [8192] * 128, config).workspace_bytes == 0


@pytest.mark.cutlass
def test_mla_fp16_split_and_reduction_kernels() -> None:
    result = _compile("cutlass_mla_decode_fp16", mla_shape(b=4))
    analysis = result.analysis
    hist, classes = analysis.sass.histogram, analysis.sass.classes
    kernels = {r.kernel.split("_cutlass_example")[0]: r for r in analysis.resources}
    assert set(kernels) == {"kernel_cutlass_split_kv_kernel", "kernel_cutlass_reduction_kernel"}
    split_kernel = kernels["kernel_cutlass_split_kv_kernel"]
    assert split_kernel.registers == 168 and split_kernel.local_bytes == 0  # 65536 / 384 threads
    assert _count(hist, "UTCHMMA.2CTA") > 0  # tcgen05.mma, f16 kind, on a CTA pair
    assert _count(hist, "UTMALDG.3D.2CTA") > 0  # paged cache: (row in page, column, page index)
    assert _count(hist, "UTMALDG.4D.2CTA") > 0  # Q: (head, column, token, batch)
    assert _count(hist, "LDGSTS") > 0  # the page-table warp's cp.async
    assert _count(hist, "UTCATOMSWS.2CTA") > 0  # TMEM allocated for the pair
    assert classes.get("setmaxreg", 0) > 0 and classes.get("tmem_copy", 0) > 0
    assert analysis.dynamic_smem_bytes == result.compiled.dynamic_smem_bytes == SMEM_LIMIT_SM100


@pytest.mark.cutlass
def test_mla_fp8_full_batch_has_no_reduction_kernel() -> None:
    analysis = _compile("cutlass_mla_decode_fp8", mla_shape(b=128)).analysis
    hist = analysis.sass.histogram
    (kernel,) = analysis.resources
    assert "split_kv_kernel" in kernel.kernel and kernel.local_bytes == 0
    assert _count(hist, "UTCQMMA.2CTA") > 0 and _count(hist, "UTCHMMA") == 0  # tcgen05.mma kind::f8f6f4
    assert _count(hist, "F2FP.SATFINITE.E4M3") > 0  # P and O rounded to e4m3
    assert _count(hist, "LDGSTS") == 0  # no page-table warp: page indices are plain loads
    assert analysis.dynamic_smem_bytes == SMEM_LIMIT_SM100


def example_storage_bytes(kernel: Any) -> Callable[[Any], int]:
    """Compile-cache probe: the size of the SMEM struct the example's host object traced (it exists only
    while compiling, so the cache records it beside the binary)."""
    hosts: list[Any] = []
    host_for = kernel.host_for
    kernel.host_for = lambda shape: hosts.append(host_for(shape)) or hosts[-1]
    return lambda compiled: hosts[0].fmha.shared_storage.size_in_bytes()


@pytest.mark.cutlass
def test_fmha_one_cta_mma_and_tma_store() -> None:
    """The launch's dynamic SMEM (read from the host IR) is the example's own storage struct: both facts
    come from the compile that built the binary (this test's, on a cold cache), kept with it in the cache."""
    plan = get_plan("cutlass_fmha_sm100")("bfloat16")
    result = compile_cached(
        plan,
        plan.default_config(),
        FMHA_SHAPE,
        SM100,
        need_function=False,
        facts={"example_storage_bytes": example_storage_bytes},
    )
    storage = result.facts["example_storage_bytes"]
    assert result.compiled.dynamic_smem_bytes == storage <= SMEM_LIMIT_SM100
    analysis = result.analysis
    assert analysis is not None and analysis.dynamic_smem_bytes == storage
    hist, classes = analysis.sass.histogram, analysis.sass.classes
    (resources,) = analysis.resources
    assert resources.registers == 128 and resources.local_bytes == 0  # 65536 / 512 threads
    assert _count(hist, "UTCHMMA") > 0 and _count(hist, "UTCHMMA.2CTA") == 0  # one CTA per MMA
    assert _count(hist, "UTMALDG") > 0 and _count(hist, "UTMASTG") > 0  # TMA in, TMA-store epilogue
    for name in ("tmem_alloc", "tmem_copy", "tcgen05_commit", "setmaxreg"):
        assert classes.get(name, 0) > 0, name


def test_sm90a_is_refused_with_one_clean_message(cli_error: Callable[[list[str]], str]) -> None:
    for name in PLANS:
        with pytest.raises(ArchError, match=rf"{name}' does not support sm_90a; it supports sm_100a"):
            check_supported(name, get_plan(name).archs, "sm_90a")
    assert cli_error(["cutlass_mla_decode_fp16", "--compile-only", "--arch", "sm_90a"]) == (
        "error: kernel 'cutlass_mla_decode_fp16' does not support sm_90a; it supports sm_100a (pass --arch sm_100a)"
    )


@pytest.mark.parametrize(
    ("name", "shape", "message"),
    [
        ("cutlass_mla_decode_fp16", mla_shape(s=2), r"needs --s 1: the example has no causal mask"),
        ("cutlass_mla_decode_fp8", mla_shape(page=48), r"needs --page to divide 128"),
        ("cutlass_mla_decode_fp16", mla_shape(h=256), r"needs --h <= 128"),
        ("cutlass_fmha_sm100", FMHA_SHAPE | {"d": 96}, r"needs --d in 32, 64, 128"),
        ("cutlass_fmha_sm100", FMHA_SHAPE | {"hk": 3}, r"--h \(=16\) to be a multiple of --hk \(=3\)"),
    ],
)
def test_shapes_it_cannot_take(name: str, shape: dict[str, int], message: str) -> None:
    with pytest.raises(UnsupportedShapeError, match=message):
        get_plan(name)().validate_shape(shape)


@pytest.mark.parametrize("name", ["cutlass_mla_decode_fp16", "cutlass_mla_decode_fp8"])
def test_mla_launch_views_match_the_compiled_types(name: str, cute_type: Callable[[Any], str]) -> None:
    """Views of our workload's tensors (CPU stand-ins) type exactly like the fake tensors compiled."""
    import cutlass
    import torch

    from mla_var3.kernel.cute_python.attention.example_kernel import fake_vector, vector
    from mla_var3.kernel.cute_python.mla.cutlass_mla.common import example_views, fake_example_views
    from mla_var3.kernel.tensors import cute_dtype, torch_dtype

    plan = get_plan(name)()
    b, s, h, page, pages = 3, 1, 128, 64, 9
    dtype = torch_dtype(plan.dtype)
    inputs = {
        "q": torch.zeros(b, s, h, 576).to(dtype),
        "kv_cache": torch.zeros(pages, page, 1, 576).to(dtype),
        "block_table": torch.zeros(b, 3, dtype=torch.int32),
        "seqlens": torch.full((b,), 130, dtype=torch.int32),
    }
    outputs = plan.allocate_outputs(inputs, mla_shape(b=b, s=s, h=h, page=page))
    assert outputs["lse"].shape == (b, h, s) and outputs["lse"].stride(1) == 1  # head-contiguous
    real = example_views(inputs, outputs, cute_dtype(plan.dtype))
    fake = fake_example_views(cute_dtype(plan.dtype))
    assert [cute_type(t) for t in real] == [cute_type(t) for t in fake]
    assert cute_type(vector(inputs["seqlens"])) == cute_type(fake_vector(cutlass.Int32))


def test_fmha_launch_views_match_the_compiled_types(cute_type: Callable[[Any], str]) -> None:
    import torch

    from mla_var3.kernel.cute_python.attention.cutlass_fmha.imported.plan import _as_5d, _fake_5d
    from mla_var3.kernel.tensors import cute_dtype

    q = torch.zeros(2, 100, 16, 128, dtype=torch.bfloat16)
    assert cute_type(_as_5d(q, 4)) == cute_type(_fake_5d(cute_dtype("bfloat16")))
