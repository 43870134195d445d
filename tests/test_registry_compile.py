"""Our CuTe DSL kernels compile for every arch they declare, without a GPU, and their SASS shows
the instructions that prove their pattern is there (imported CUTLASS examples have their own
tests); registration fails loudly for a misplaced plan."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mla_var3.kernel.compile_cache import compile_cached
from mla_var3.kernel.registry import all_plans
from mla_var3.project import EXAMPLES_ROOT, cutlass_dir

# The SASS classes (mla_var3.analysis.sass.pattern_classes) each kernel must show.
EXPECTED_CLASSES = {
    "elementwise_add": {"ldg_128", "stg_128"},
    "hopper_gemm_ws": {"wgmma", "tma_load", "tma_store", "mbarrier", "setmaxreg"},
    "cutlass_hopper_dense_gemm": {"wgmma", "tma_load", "mbarrier"},
    "sm100_gemm_tcgen05": {"tcgen05_mma", "tma_load", "tmem_alloc"},
}
CASES = [(name, arch) for name in EXPECTED_CLASSES for arch in all_plans()[name].archs]


def test_expectations_name_registered_cute_kernels() -> None:
    assert all(all_plans()[name].backend == "cute" for name in EXPECTED_CLASSES)


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
def test_compiles_for_each_declared_arch(name: str, arch: str, restored_imports: None) -> None:
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
