"""Every registered CuTe DSL kernel compiles for every arch it declares, without a GPU, and its
SASS shows the instructions that prove its pattern is there."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from mla_var3.kernel.compile_cache import compile_cached
from mla_var3.kernel.registry import all_plans
from mla_var3.kernel.upstream import EXAMPLES_ROOT, cutlass_dir

# The SASS classes (mla_var3.analysis.sass.pattern_classes) each kernel must show.
EXPECTED_CLASSES = {
    "elementwise_add": {"ldg_128", "stg_128"},
    "hopper_gemm_ws": {"wgmma", "tma_load", "tma_store", "mbarrier", "setmaxreg"},
    "cutlass_hopper_dense_gemm": {"wgmma", "tma_load", "mbarrier"},
    "sm100_gemm_tcgen05": {"tcgen05_mma", "tma_load", "tmem_alloc"},
}
CASES = [(name, arch) for name, plan in all_plans().items() if plan.backend == "cute" for arch in plan.archs]


def test_every_cute_kernel_has_expectations() -> None:
    assert {name for name, _ in CASES} == set(EXPECTED_CLASSES)


@pytest.fixture
def restored_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Loading a CUTLASS example puts its siblings (``helpers``, ...) on sys.path and in
    sys.modules; take them out again so other tests can load their own example trees."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    examples = str(cutlass_dir().resolve() / EXAMPLES_ROOT)
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(examples):
            del sys.modules[name]


@pytest.mark.parametrize(("name", "arch"), CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_compiles_for_each_declared_arch(name: str, arch: str, tmp_cache: object, restored_imports: None) -> None:
    plan_cls = all_plans()[name]
    upstream = plan_cls.upstream_example()
    if upstream and not (cutlass_dir() / upstream).is_file():
        pytest.skip("needs third_party/cutlass (nox -s cutlass)")
    plan = plan_cls()
    shape = dict(plan.check_shapes[0]) if plan.check_shapes else plan.default_shape()
    result = compile_cached(plan, plan.default_config(), shape, arch, need_function=False)
    analysis = result.analysis_dict()
    assert analysis is not None and "error" not in analysis, analysis
    (kernel, *_) = analysis["resources"]
    assert 0 < kernel["registers"] <= 255 and kernel["local_bytes"] == 0  # no spills
    classes = {k for k, v in analysis["sass_classes"].items() if v}
    assert EXPECTED_CLASSES[name] <= classes, f"{name} on {arch}: missing {EXPECTED_CLASSES[name] - classes}"
