"""The name -> module index the CLI and the evidence children look plans up in (mla_var3.kernel.plan_index)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mla_var3.kernel import plan_index
from mla_var3.kernel.errors import UnknownKernelError
from mla_var3.kernel.registry import all_plans, get_plan
from mla_var3.project import REPO_ROOT


def test_the_committed_index_is_what_the_registry_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(plan_index.EXTRA_ENV, raising=False)
    found = plan_index.index_from_registry()
    assert set(found) == set(all_plans()), "the index must name every registered plan"
    assert plan_index.read_index() == found, (
        "mla_var3/kernel/plan_index.json is out of date: run `python -m mla_var3.kernel.plan_index` and commit it"
    )


def test_every_indexed_name_finds_the_registrys_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(plan_index.EXTRA_ENV, raising=False)
    for name in plan_index.read_index():
        assert plan_index.find_plan(name) is get_plan(name), name
    assert plan_index.find_plan("elementwise-add") is get_plan("elementwise_add")


def test_a_stale_or_missing_entry_falls_back_to_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(plan_index.EXTRA_ENV, raising=False)
    stale = {"elementwise_add": "snippets.gpu.copy_vector_width", "hopper_gemm_v0": "mla_var3.no_such_module"}
    monkeypatch.setattr(plan_index, "read_index", lambda: stale)
    assert plan_index.find_plan("elementwise_add") is get_plan(
        "elementwise_add"
    )  # the module no longer declares it
    assert plan_index.find_plan("hopper_gemm_v0") is get_plan("hopper_gemm_v0")  # the module is gone
    assert plan_index.find_plan("hopper_gemm_ws") is get_plan("hopper_gemm_ws")  # not in the index
    with pytest.raises(UnknownKernelError, match="did you mean elementwise_add"):
        plan_index.find_plan("elementwise_ad")


def test_a_lookup_imports_one_plan_module() -> None:
    """In a fresh process: of every module the index names, only the plan's own is imported; no registry scan."""
    probe = (
        "import sys; from mla_var3.kernel import plan_index, registry\n"
        "plan = plan_index.find_plan('torch_row_reduce')\n"
        "loaded = sorted(set(plan_index.read_index().values()) & set(sys.modules))\n"
        "print(plan.name, registry.all_plans.cache_info().currsize, *loaded)"
    )
    env = {k: v for k, v in os.environ.items() if k != plan_index.EXTRA_ENV}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True
    )
    module = plan_index.read_index()["torch_row_reduce"]
    assert out.stdout.split() == ["torch_row_reduce", "0", module], out.stderr
