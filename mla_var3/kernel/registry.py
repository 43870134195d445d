"""The kernel registry: every ``PLAN`` exported by a variant package under ``cute_python/``,
``cutile/`` or ``torch_ref/``.

A variant package (``mla_var3/kernel/<backend>/<layer>/<family>/<variant>/``) exports its
plan class as ``PLAN`` from ``__init__.py``. ``$MLA_VAR3_EXTRA_PLANS`` names further modules
(comma-separated) whose ``PLANS`` tuple is registered too: test fixtures and out-of-tree plans. Plan modules import the CuTe DSL lazily (inside
``plan()``), so listing kernels stays fast.
"""

from __future__ import annotations

import difflib
import importlib
import os
import pkgutil
from functools import cache

from mla_var3.kernel.errors import UnknownKernelError
from mla_var3.kernel.plan import LAYERS, KernelPlan

BACKEND_PACKAGES = ("mla_var3.kernel.cute_python", "mla_var3.kernel.cutile", "mla_var3.kernel.torch_ref")


@cache
def all_plans() -> dict[str, type[KernelPlan]]:
    """Every registered plan by name, sorted."""
    plans: dict[str, type[KernelPlan]] = {}
    for root_name in BACKEND_PACKAGES:
        root = importlib.import_module(root_name)
        for info in pkgutil.walk_packages(root.__path__, prefix=root_name + "."):
            if not info.ispkg or info.name.count(".") != root_name.count(".") + 3:
                continue  # only <layer>.<family>.<variant>
            module = importlib.import_module(info.name)
            plan = getattr(module, "PLAN", None)
            if plan is None:
                continue
            _add(plans, plan, info.name)
    for module_name in filter(None, os.environ.get("MLA_VAR3_EXTRA_PLANS", "").split(",")):
        for plan in importlib.import_module(module_name.strip()).PLANS:
            _add(plans, plan, module_name)
    return dict(sorted(plans.items()))


def _add(plans: dict[str, type[KernelPlan]], plan: type[KernelPlan], where: str) -> None:
    _validate(plan, where)
    if plan.name in plans:
        raise RuntimeError(f"kernel name {plan.name!r} is declared twice ({where})")
    plans[plan.name] = plan


def _validate(plan: type[KernelPlan], where: str) -> None:
    for attr in ("name", "layer", "description", "archs", "shape_params"):
        if not hasattr(plan, attr):
            raise RuntimeError(f"{where}: PLAN {plan.__name__} lacks {attr!r}")
    if plan.layer not in LAYERS:
        raise RuntimeError(f"{where}: layer {plan.layer!r} is not one of {', '.join(LAYERS)}")
    if plan.name != plan.name.lower() or not plan.name.replace("_", "").isalnum():
        raise RuntimeError(f"{where}: kernel name {plan.name!r} must be snake_case")


def get_plan(name: str) -> type[KernelPlan]:
    """The plan named ``name`` (``-`` and ``_`` both accepted), or an error with close names."""
    plans = all_plans()
    key = name.replace("-", "_")
    if key in plans:
        return plans[key]
    close = difflib.get_close_matches(key, plans, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownKernelError(f"unknown kernel {name!r}{hint} (python -m mla_var3.kernel --list shows all)")
