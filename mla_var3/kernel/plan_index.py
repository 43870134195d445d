"""Which module registers each plan, so a process that needs one plan imports one module.

:func:`mla_var3.kernel.registry.all_plans` imports every variant package and every GPU snippet (the
snippets bring the CuTe DSL with them): ~1 s of every child process that names one kernel
(``python -m mla_var3.kernel NAME``, ``python -m mla_var3.evidence run-kernel|check-member``).
:func:`find_plan` looks the name up in ``plan_index.json`` (beside this file: name -> the module the
registry found its plan in) and imports that module only.

The index is written by ``python -m mla_var3.kernel.plan_index`` from the registry, and
``tests/test_plan_index.py`` fails while it differs from what the registry finds. Lookups never
depend on it being current: a name it lacks, a module that is gone or no longer declares the name
fall back to :func:`~mla_var3.kernel.registry.get_plan` (every module; its errors name close
matches). Plans named by ``$MLA_VAR3_EXTRA_PLANS`` are looked up in those modules first, as the
registry would find them. No plan imports this module: it is in no plan's source fingerprint.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from functools import cache
from pathlib import Path

from mla_var3.kernel.plan import KernelPlan

INDEX_FILE = Path(__file__).with_name("plan_index.json")
EXTRA_ENV = "MLA_VAR3_EXTRA_PLANS"


def index_from_registry() -> dict[str, str]:
    """Plan name -> the module the registry imports it from (variant package or GPU snippet), the
    ``$MLA_VAR3_EXTRA_PLANS`` modules left out (they are named per process, not part of the tree)."""
    from mla_var3.kernel.registry import BACKEND_PACKAGES, SNIPPETS_GPU, _backend_plans, snippet_plans

    found = [pair for root in BACKEND_PACKAGES for pair in _backend_plans(root)] + snippet_plans(SNIPPETS_GPU)
    return dict(sorted((plan.name, module) for module, plan in found))


@cache
def read_index() -> dict[str, str]:
    """The committed index; empty if the file is missing or unreadable (every lookup falls back)."""
    try:
        data = json.loads(INDEX_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_index() -> Path:
    INDEX_FILE.write_text(json.dumps(index_from_registry(), indent=1) + "\n", encoding="utf-8")
    read_index.cache_clear()
    return INDEX_FILE


def _declared(module: object, key: str) -> type[KernelPlan] | None:
    """The plan named ``key`` that ``module`` registers (``PLAN`` or one of ``PLANS``), if any."""
    candidates = [getattr(module, "PLAN", None), *getattr(module, "PLANS", ())]
    return next((p for p in candidates if getattr(p, "name", None) == key), None)


def _import(module_name: str) -> object:
    from mla_var3.kernel import registry

    if module_name.startswith("snippets.gpu."):  # imported from its path, as the registry does
        stem = module_name.rsplit(".", 1)[1]
        return sys.modules.get(module_name) or registry._import_file(
            module_name, registry.SNIPPETS_GPU / f"{stem}.py"
        )
    return importlib.import_module(module_name)


def find_plan(name: str) -> type[KernelPlan]:
    """The plan named ``name`` (``-`` and ``_`` both accepted), importing only the module that declares it."""
    key = name.replace("-", "_")
    for extra in filter(None, (m.strip() for m in os.environ.get(EXTRA_ENV, "").split(","))):
        plan = _declared(importlib.import_module(extra), key)
        if plan is not None:
            return plan
    module_name = read_index().get(key)
    if module_name is not None:
        try:
            plan = _declared(_import(module_name), key)
        except ImportError:
            plan = None
        if plan is not None:
            return plan
    from mla_var3.kernel.registry import get_plan

    return get_plan(name)


if __name__ == "__main__":
    path = write_index()
    print(f"wrote {len(read_index())} plans to {path}")
