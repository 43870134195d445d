"""Load CUTLASS's CuTe DSL examples from a CUTLASS checkout: imported, never copied.

An imported plan (WORKFLOW.md step 3, IMPORT) names an example by its path inside the CUTLASS
tree, e.g. ``examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py``, and calls
:func:`load_example` inside ``plan()`` -- never at module level, so ``--list`` neither needs
CUTLASS nor pays for importing an example. The same path is what the plan's
``upstream_example()`` returns, so the source fingerprint hashes the file that is loaded.

Where CUTLASS lives: ``$CUTLASS_DIR`` (a relative path is taken from the repository root),
else ``third_party/cutlass`` (``nox -s cutlass`` checks it out at the pinned commit). A missing
example raises :class:`~mla_var3.kernel.errors.CutlassDirError`, a user error: the CLI prints
its one line and exits 2.

Import paths: CUTLASS's examples import their neighbours from the examples root
(``from helpers import fmha_helpers``, ``from cute.blackwell.kernel... import ...``), so that
root, ``$CUTLASS_DIR/examples/python/CuTeDSL``, goes on ``sys.path``; an example that wants
more (rmsnorm wants ``.../CuTeDSL/cute``) names it in ``extra_paths``. The folders are
appended, not prepended: an installed package of the same name wins over an examples folder
(``dsl_tutorials/tvm_ffi`` would otherwise shadow the real ``tvm_ffi``), and such a clash
fails loudly in the example rather than silently in our process.

Switching checkouts in one process (``$CUTLASS_DIR`` changed between loads): the folders an
earlier load added for another checkout leave ``sys.path``, and the sibling modules imported
from them (``helpers``, ``cute.*``, ...) leave ``sys.modules``, so the new checkout's example
imports its own siblings, not the first checkout's cached ones.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from mla_var3.kernel.errors import CutlassDirError
from mla_var3.project import CUTLASS_DIR_ENV, EXAMPLES_ROOT, REPO_ROOT, cutlass_dir

MODULE_PREFIX = "cutlass_example"
# The sys.path entries load_example appended, in order (so a later checkout can take them out).
_ADDED_PATHS: dict[str, None] = {}


def example_file(relpath: str, root: Path = REPO_ROOT) -> Path:
    """The example's file under :func:`cutlass_dir`; :class:`CutlassDirError` if it is not there."""
    base = cutlass_dir(root)
    path = base / relpath
    if not path.is_file():
        raise CutlassDirError(
            f"CUTLASS example {relpath} not found under {base}; run `nox -s cutlass` or set {CUTLASS_DIR_ENV}"
        )
    return path.resolve()


def example_module_name(relpath: str) -> str:
    """A module name that is unique per example path and the same on every machine.

    ``cute/hopper/kernel/dense_gemm/dense_gemm.py`` under the examples root becomes
    ``cutlass_example__cute__hopper__kernel__dense_gemm__dense_gemm``. It does not depend on
    where the checkout lies, because the DSL puts the module name into generated symbol names.
    """
    rel = Path(relpath).with_suffix("")
    parts = rel.relative_to(EXAMPLES_ROOT).parts if rel.is_relative_to(EXAMPLES_ROOT) else rel.parts
    return "__".join([MODULE_PREFIX, *(re.sub(r"\W", "_", part) for part in parts)])


def load_example(relpath: str, extra_paths: Sequence[str] = (), root: Path = REPO_ROOT) -> ModuleType:
    """Import the CUTLASS example at ``relpath`` (relative to the CUTLASS root) and return it.

    ``$CUTLASS_DIR/examples/python/CuTeDSL`` and each of ``extra_paths`` (relative to the
    CUTLASS root) are appended to ``sys.path`` first. The module is registered in
    ``sys.modules`` under :func:`example_module_name` -- the DSL finds a ``@cute.jit``
    function's source through its module -- and loaded once per process and file: a second
    call returns the same module, a call for the same path in another checkout replaces it.
    """
    path = example_file(relpath, root)
    base = cutlass_dir(root).resolve()
    _forget_other_checkouts(base)
    for folder in (EXAMPLES_ROOT, *extra_paths):
        entry = str((base / folder).resolve())
        if entry not in sys.path:
            sys.path.append(entry)
        _ADDED_PATHS[entry] = None
    name = example_module_name(relpath)
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py file always has a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _forget_other_checkouts(base: Path) -> None:
    """Take the folders earlier loads added for another checkout off ``sys.path``, and the
    modules imported from them out of ``sys.modules``."""
    stale = [Path(entry) for entry in _ADDED_PATHS if not Path(entry).is_relative_to(base)]
    if not stale:
        return
    doomed = [name for name, module in list(sys.modules.items()) if _loaded_from(module, stale)]
    for name in doomed:
        del sys.modules[name]
    for entry in map(str, stale):
        del _ADDED_PATHS[entry]
        if entry in sys.path:
            sys.path.remove(entry)


def _loaded_from(module: ModuleType, folders: list[Path]) -> bool:
    """True when ``module`` (a module, package or namespace package) lives under one of ``folders``.
    Reads the module's own ``__dict__``: some modules answer any attribute (``torch._classes``)."""
    spec = module.__dict__.get("__spec__")
    locations = [module.__dict__.get("__file__")]
    if spec is not None and spec.submodule_search_locations is not None:
        try:
            locations += list(spec.submodule_search_locations)
        except (KeyError, TypeError):  # a namespace path whose parent is already gone
            pass
    return any(isinstance(loc, str) and any(Path(loc).is_relative_to(f) for f in folders) for loc in locations)


__all__ = ["CUTLASS_DIR_ENV", "EXAMPLES_ROOT", "cutlass_dir", "example_file", "example_module_name", "load_example"]
