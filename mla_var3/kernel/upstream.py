"""Load CUTLASS's CuTe DSL examples from a CUTLASS checkout: imported, never copied.

An imported plan (docs/contributing/study-workflow.md, step Import) names an example by its path inside the CUTLASS
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

Switching checkouts in one process (``$CUTLASS_DIR`` changed between loads): before loading,
every ``.../examples/python/CuTeDSL`` folder of another checkout leaves ``sys.path``, and every
module imported from one (``helpers``, ``cute.*``, earlier examples) leaves ``sys.modules``,
however it got there; so the new checkout's example imports its own siblings, never the
first checkout's cached ones.
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
    """Take other checkouts' example folders off ``sys.path`` and their modules out of ``sys.modules``."""
    sys.path[:] = [entry for entry in sys.path if not _foreign(entry, base)]
    doomed = [name for name, module in list(sys.modules.items()) if any(_foreign(loc, base) for loc in _locations(module))]
    for name in doomed:
        del sys.modules[name]


def _foreign(location: object, base: Path) -> bool:
    """True for a path inside some checkout's CuTe DSL examples that is not under ``base``."""
    return isinstance(location, str) and EXAMPLES_ROOT in Path(location).as_posix() and not Path(location).is_relative_to(base)


def _locations(module: ModuleType) -> list[object]:
    """Where a module, package or namespace package was loaded from. Reads the module's own
    ``__dict__``: some modules answer any attribute (``torch._classes``)."""
    spec = module.__dict__.get("__spec__")
    locations = [module.__dict__.get("__file__")]
    if spec is not None and spec.submodule_search_locations is not None:
        try:
            locations += list(spec.submodule_search_locations)
        except (KeyError, TypeError):  # a namespace path whose parent is already gone
            pass
    return locations


__all__ = ["CUTLASS_DIR_ENV", "EXAMPLES_ROOT", "cutlass_dir", "example_file", "example_module_name", "load_example"]
