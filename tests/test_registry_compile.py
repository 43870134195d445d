"""Registered CuTe DSL kernels compile for every arch they declare, without a GPU: registers within
the limit, no spills, and the SASS classes that prove their pattern; registration fails loudly for a
misplaced plan.

Each kernel compiles once per run: at its default shape (with :data:`SHAPE_FLAGS` over it)
and default config, through the run's shared compile cache, where the kernel's own test file
compiles the same binary -- so the checks here read an entry that is already there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mla_var3.kernel.compile_cache import compile_cached
from mla_var3.kernel.registry import all_plans
from mla_var3.project import cutlass_dir

_TMA_MMA_SM100 = {"tcgen05_mma", "tcgen05_commit", "tmem_alloc", "tma_load", "mbarrier"}
_MLA_SM90 = {"wgmma", "tma_load", "mbarrier", "tma_descriptor_prefetch"}

# The SASS classes (mla_var3.analysis.sass.pattern_classes) each kernel must show.
EXPECTED_CLASSES = {
    "elementwise_add": {"ldg_128", "stg_128"},
    "hopper_gemm_ws": {"wgmma", "tma_load", "tma_store", "mbarrier", "setmaxreg"},
    "cutlass_hopper_dense_gemm": {"wgmma", "tma_load", "mbarrier"},
    "sm100_gemm_tcgen05": {"tcgen05_mma", "tma_load", "tmem_alloc"},
    # MLA decode variants (tests/test_mla_decode_cute.py): v2 and v3 split the warps into roles.
    "mla_decode_v0": _MLA_SM90,
    "mla_decode_v1": _MLA_SM90,
    "mla_decode_v2": _MLA_SM90 | {"setmaxreg"},
    "mla_decode_v3": _MLA_SM90 | {"setmaxreg"},
    # GPU snippets (tests/test_gpu_snippets.py): the access width, the copy engine.
    "copy_vec32": {"ldg_32", "stg_32"},
    "copy_vec64": {"ldg_64", "stg_64"},
    "copy_vec128": {"ldg_128", "stg_128"},
    "tile_load_cp_async": {"cp_async", "cp_async_wait"},
    "tile_load_tma": {"tma_load", "mbarrier"},
    "transpose_smem": {"lds_32", "sts_32", "barrier"},
    "transpose_smem_swizzled": {"lds_32", "sts_32", "barrier"},
    # CUTLASS's Blackwell dense GEMM series (tests/test_cutlass_blackwell_dense_gemm.py).
    "cutlass_sm100_dense_gemm": _TMA_MMA_SM100 | {"tma_store"},
    "cutlass_sm100_dense_gemm_software_pipeline": _TMA_MMA_SM100 | {"tma_store"},
    "cutlass_sm100_dense_gemm_persistent": _TMA_MMA_SM100 | {"tma_store"},
    "cutlass_sm100_dense_gemm_persistent_prefetch": _TMA_MMA_SM100 | {"tma_l2_prefetch", "tma_descriptor_prefetch"},
    "cutlass_sm100_dense_gemm_persistent_dynamic": _TMA_MMA_SM100 | {"clc_query"},
    # Path C's GEMM-side examples (tests/test_cutlass_pathc_gemm.py).
    "cutlass_sm100_blockscaled_gemm_persistent": _TMA_MMA_SM100,
    "cutlass_sm100_blockscaled_gemm_persistent_prefetch": _TMA_MMA_SM100 | {"tma_l2_prefetch"},
    "cutlass_sm100_blockscaled_gemm_persistent_amax": _TMA_MMA_SM100,
    "cutlass_sm100_mixed_input_gemm": _TMA_MMA_SM100 | {"tmem_copy", "setmaxreg"},
    "cutlass_sm100_grouped_mixed_input_gemm": _TMA_MMA_SM100 | {"tmem_copy", "setmaxreg"},
    "cutlass_sm100_efc_custom_epilogue_gemm": _TMA_MMA_SM100 | {"tma_store"},
    "cutlass_sm100_efc_activation_gemm": _TMA_MMA_SM100 | {"tma_store"},
    "cutlass_sm100_blockwise_gemm": _TMA_MMA_SM100 | {"setmaxreg"},
    "cutlass_sm100_blockwise_contiguous_grouped_gemm": _TMA_MMA_SM100 | {"setmaxreg"},
    "cutlass_rmsnorm_sm100": {"ldg_128", "stg_128", "shuffle"},
    "cutlass_pdl_elementwise_add": {"grid_dependency"},
    # The attention-side examples (tests/test_cutlass_attention.py, tests/test_cutlass_mla_fmha.py).
    "cutlass_fmha_bwd_sm100": _TMA_MMA_SM100 | {"tma_reduce"},
    "cutlass_mixed_input_fmha_decode": _TMA_MMA_SM100 | {"tmem_copy"},
    "cutlass_mixed_input_fmha_prefill_d256": _TMA_MMA_SM100 | {"tmem_copy", "setmaxreg"},
    "cutlass_mixed_input_fmha_prefill_d512": _TMA_MMA_SM100 | {"tmem_copy", "setmaxreg"},
    "cutlass_mamba2_ssd": _TMA_MMA_SM100 | {"tma_store"},
    "cutlass_mla_decode_fp16": _TMA_MMA_SM100 | {"setmaxreg"},
    "cutlass_mla_decode_fp8": _TMA_MMA_SM100 | {"setmaxreg"},
}
# Not listed, each for its reason:
# - the SM100 steps (sm100_gemm_two_cta, _ws_tma_store, _persistent_static, _persistent_clc,
#   _tmem_double_buffer) and CUTLASS's tutorial GEMMs (cutlass_fp16_gemm_*): their test files
#   (test_sm100_gemm_steps.py, test_cutlass_tutorial_gemm.py) compile each once, read the host IR of
#   that compile (which a cached entry does not keep) and assert registers, spills and SASS
#   themselves; a second compile here would cost about a second per kernel for nothing new.
# - cutlass_fmha_sm100: test_cutlass_mla_fmha.py compiles it directly, to capture the host object
#   the compile builds, and asserts the same there.
# - cutlass_ampere_fa2 spills by design (its test asserts how much); cutlass_hopper_fmha and
#   cutlass_rmsnorm have their own tests; non-CuTe backends (torch, cuTile, libraries) have no cubin
#   of ours to read.
# - this wave's plans (hopper_gemm_v*, fmha_hopper_v*, pdl_pair*, rmsnorm_v*, row_reduce,
#   hopper_gemm_fp8*, hopper_gemm_auto) are tested in their own new files.
# Shape flags over the default shape where the kernel's own test compiles another static shape (the
# same binary, one compile): test_mla_decode_cute.py, test_cutlass_mla_fmha.py, test_cutlass_attention.py.
SHAPE_FLAGS: dict[str, dict[str, int]] = {
    **dict.fromkeys(("mla_decode_v0", "mla_decode_v1", "mla_decode_v2", "mla_decode_v3"), {"b": 4, "t": 1000}),
    "cutlass_mla_decode_fp16": {"b": 4},
    "cutlass_fmha_bwd_sm100": {"d": 128},
}
CASES = [(name, arch) for name in EXPECTED_CLASSES for arch in all_plans()[name].archs]


def test_expectations_name_registered_cute_kernels() -> None:
    assert all(all_plans()[name].backend == "cute" for name in EXPECTED_CLASSES)


@pytest.mark.parametrize(("name", "arch"), CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_compiles_for_each_declared_arch(name: str, arch: str, restored_imports: None) -> None:
    plan_cls = all_plans()[name]
    upstream = plan_cls.upstream_example()
    if upstream and not (cutlass_dir() / upstream).is_file():
        pytest.skip("needs third_party/cutlass (nox -s cutlass)")
    if plan_cls.unavailable_reason():
        pytest.skip(plan_cls.unavailable_reason())
    plan = plan_cls()
    shape = plan.default_shape() | SHAPE_FLAGS.get(name, {})
    result = compile_cached(plan, plan.default_config(), shape, arch, need_function=False)
    analysis = result.analysis_dict()
    assert analysis is not None and "error" not in analysis, analysis
    (kernel, *_) = analysis["resources"]
    assert 0 < kernel["registers"] <= 255 and kernel["local_bytes"] == 0  # no spills
    classes = {k for k, v in analysis["sass_classes"].items() if v}
    assert EXPECTED_CLASSES[name] <= classes, f"{name} on {arch}: missing {EXPECTED_CLASSES[name] - classes}"


# --- registration is explicit -------------------------------------------------------------------
def _tree(tmp_path: Path, files: dict[str, str]) -> str:
    """A throwaway backend package ``fakebackend_<n>`` under tmp_path; its import name."""
    name = f"fakebackend_{abs(hash(tmp_path)) % 10**8}"
    for rel, text in {"__init__.py": "", **files}.items():
        path = tmp_path / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return name


PLAN_SOURCE = """
from mla_var3.kernel.plan import KernelPlan, ShapeParam

class Plan(KernelPlan):
    name = "fake_{name}"
    layer = "elementwise"
    description = "a fake plan"
    archs = ("sm_90a",)
    shape_params = (ShapeParam("n", 8, "elements", minimum=1),)
    prepare_inputs = allocate_outputs = reference_fn = _autotune_configs = _algorithmic_flops_bytes = plan = None

PLAN = Plan
"""


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"elementwise/__init__.py": PLAN_SOURCE.format(name="shallow")}, "exports PLAN Plan at depth 1"),
        ({"elementwise/add/__init__.py": "", "elementwise/add/v0/__init__.py": "", "elementwise/add/v0/plan.py": ""},
         "has a plan.py but its __init__.py exports no PLAN"),
    ],
)  # fmt: skip
def test_a_misplaced_plan_fails_registration(
    files: dict[str, str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mla_var3.kernel import registry

    files = {"elementwise/__init__.py": "", **files}
    package = _tree(tmp_path, files)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(registry.RegistrationError, match=message):
        registry._backend_plans(package)


def test_a_plan_at_variant_depth_registers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mla_var3.kernel import registry

    package = _tree(tmp_path, {
        "elementwise/__init__.py": "", "elementwise/add/__init__.py": "",
        "elementwise/add/v0/__init__.py": PLAN_SOURCE.format(name="ok"),
    })  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [(where, plan.name) for where, plan in registry._backend_plans(package)] == [
        (f"{package}.elementwise.add.v0", "fake_ok")
    ]
    assert registry._backend_plans("no_such_backend_package") == []  # an absent backend is empty
