"""The kernel registry: every ``PLAN`` of a backend package's variant packages, and the GPU snippets' plans.

Backend packages: ``cute_python/``, ``cutile/``, ``torch_ref/`` and ``external/`` (peers built
from pinned sources, e.g. FlashMLA through ctypes; it may be empty or absent). A variant
package, ``mla_var3/kernel/<backend>/<layer>/<family>/<variant>/``, exports its plan class as
``PLAN`` from ``__init__.py``. Registration is explicit and fails loudly: a ``PLAN`` at any
other depth, a variant package with a ``plan.py`` but no ``PLAN``, a plan that lacks a
required attribute, and a name declared twice are errors naming the package and the fix.
GPU snippets (``snippets/gpu/*.py``: the micro-benchmarks pages show, kernel and plans in one
file) register the ``PLANS`` tuple each file exports; a snippet file without one is an error.
``$MLA_VAR3_EXTRA_PLANS`` names further modules (comma-separated) whose ``PLANS`` tuple is
registered too: test fixtures and out-of-tree plans. Plan modules import the CuTe DSL lazily
(inside ``plan()``), so listing kernels stays fast.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import pkgutil
import sys
from functools import cache
from pathlib import Path

from mla_var3.kernel.errors import UnknownKernelError
from mla_var3.kernel.plan import LAYERS, KernelPlan
from mla_var3.project import REPO_ROOT

BACKEND_PACKAGES = (
    "mla_var3.kernel.cute_python",
    "mla_var3.kernel.cutile",
    "mla_var3.kernel.torch_ref",
    "mla_var3.kernel.external",
)
SNIPPETS_GPU = REPO_ROOT / "snippets" / "gpu"
VARIANT_DEPTH = 3  # <layer>.<family>.<variant> below the backend package
REQUIRED = ("name", "layer", "description", "archs", "shape_params")


class RegistrationError(RuntimeError):
    """A plan package is laid out or declared wrongly (a bug in the tree, not bad user input)."""


@cache
def all_plans() -> dict[str, type[KernelPlan]]:
    """Every registered plan by name, sorted."""
    plans: dict[str, type[KernelPlan]] = {}
    for root_name in BACKEND_PACKAGES:
        for module_name, plan in _backend_plans(root_name):
            _add(plans, plan, module_name)
    for module_name, plan in snippet_plans(SNIPPETS_GPU):
        _add(plans, plan, module_name)
    for module_name in filter(None, os.environ.get("MLA_VAR3_EXTRA_PLANS", "").split(",")):
        for plan in importlib.import_module(module_name.strip()).PLANS:
            _add(plans, plan, module_name)
    return dict(sorted(plans.items()))


def _backend_plans(root_name: str) -> list[tuple[str, type[KernelPlan]]]:
    """``(package, PLAN)`` for every variant package under ``root_name``; errors for misplaced plans."""
    if importlib.util.find_spec(root_name) is None:
        return []  # a backend package nobody has filled yet
    root = importlib.import_module(root_name)
    found = []
    for info in pkgutil.walk_packages(root.__path__, prefix=root_name + "."):
        if not info.ispkg:
            continue
        depth = info.name.count(".") - root_name.count(".")
        module = importlib.import_module(info.name)
        plan = getattr(module, "PLAN", None)
        if depth != VARIANT_DEPTH:
            if plan is not None:
                raise RegistrationError(
                    f"{info.name} exports PLAN {plan.__name__} at depth {depth}; plans live in variant "
                    f"packages {root_name}.<layer>.<family>.<variant> (move it there)"
                )
            continue
        if plan is None:
            if (Path(module.__file__ or "").parent / "plan.py").is_file():
                raise RegistrationError(
                    f"{info.name} has a plan.py but its __init__.py exports no PLAN; add `PLAN = <YourPlan>`"
                )
            continue
        found.append((info.name, plan))
    return found


def snippet_plans(folder: Path, package: str = "snippets.gpu") -> list[tuple[str, type[KernelPlan]]]:
    """``(module, plan)`` for every plan in the ``PLANS`` tuple of each ``*.py`` file of ``folder``.

    Each file is imported from its path as ``<package>.<stem>`` (the DSL reads kernel source from
    that file); a file that exports no plan is an error naming it.
    """
    found = []
    for path in sorted(folder.glob("*.py")):
        name = f"{package}.{path.stem}"
        module = sys.modules.get(name) or _import_file(name, path)
        plans = getattr(module, "PLANS", ())
        if not plans:
            raise RegistrationError(f"{path} exports no plan; end a GPU snippet with `PLANS = (<YourPlan>, ...)`")
        found += [(name, plan) for plan in plans]
    return found


def _import_file(name: str, path: Path) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RegistrationError(f"{path}: cannot be imported as {name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: dataclasses and the DSL look their module up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _add(plans: dict[str, type[KernelPlan]], plan: type[KernelPlan], where: str) -> None:
    _validate(plan, where)
    if plan.name in plans:
        raise RegistrationError(f"kernel name {plan.name!r} is declared twice ({where})")
    plans[plan.name] = plan


def _validate(plan: type[KernelPlan], where: str) -> None:
    if not (isinstance(plan, type) and issubclass(plan, KernelPlan)):
        raise RegistrationError(f"{where}: PLAN {plan!r} is not a KernelPlan subclass")
    missing = [attr for attr in REQUIRED if not hasattr(plan, attr)]
    if missing:
        raise RegistrationError(f"{where}: PLAN {plan.__name__} lacks {', '.join(missing)} (see KernelPlan's docstring)")
    if plan.layer not in LAYERS:
        raise RegistrationError(f"{where}: layer {plan.layer!r} is not one of {', '.join(LAYERS)}")
    if plan.name != plan.name.lower() or not plan.name.replace("_", "").isalnum():
        raise RegistrationError(f"{where}: kernel name {plan.name!r} must be snake_case")
    params = {p.name for p in plan.shape_params}
    unknown = set(plan.static_shape_params or ()) - params
    if unknown:
        raise RegistrationError(f"{where}: static_shape_params names {sorted(unknown)}, not shape params of {plan.name}")


def get_plan(name: str) -> type[KernelPlan]:
    """The plan named ``name`` (``-`` and ``_`` both accepted), or an error with close names."""
    plans = all_plans()
    key = name.replace("-", "_")
    if key in plans:
        return plans[key]
    close = difflib.get_close_matches(key, plans, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownKernelError(f"unknown kernel {name!r}{hint} (python -m mla_var3.kernel --list shows all)")
