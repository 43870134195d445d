"""Source fingerprints: a hash of a kernel's code that changes whenever its compiled result may change.

A plan's fingerprint covers its own files, every ``mla_var3`` module they import (the import
closure: absolute and relative imports, at module level or inside functions, transitively,
plus the ``__init__.py`` of each package on the way, which Python runs on import), the DSL
version, and -- for a plan that loads a CUTLASS example -- that example file's contents, or
a marker saying it is missing. Imports under ``if TYPE_CHECKING:`` never run and are not
followed. Every ``mla_var3`` import is followed, with no exception: what drives kernels (the
CLI, the runner) imports the plans, never the reverse, so it stays out of their closures.
Third-party modules (``cutlass``, ``torch``) enter through the version strings, not their files.

Wide enough that stale evidence never shows as fresh, no wider: editing a file in the
closure changes the hash, editing any other file does not.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from mla_var3.project import DSL_DISTRIBUTION, REPO_ROOT, cutlass_dir, dsl_version

if TYPE_CHECKING:
    from mla_var3.kernel.plan import KernelPlan

PACKAGE = "mla_var3"


def module_name(path: Path, root: Path = REPO_ROOT) -> str | None:
    """``mla_var3.kernel.plan`` for ``<root>/mla_var3/kernel/plan.py``; ``None`` outside the package."""
    try:
        rel = path.resolve().relative_to(root)
    except ValueError:
        return None
    if rel.suffix != ".py" or not rel.parts or rel.parts[0] != PACKAGE:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_file(name: str, root: Path = REPO_ROOT) -> Path | None:
    """The file that defines module ``name`` under ``root`` (module or package), if any."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path, name: str) -> str:
    """The package that relative imports in ``path`` (module ``name``) are resolved against."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import statement in ``tree`` except those under ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imported_modules(path: Path, root: Path = REPO_ROOT) -> frozenset[str]:
    """Names of the modules ``path`` imports that could be ``mla_var3`` modules (absolute names).

    ``from pkg import name`` yields both ``pkg`` and ``pkg.name`` (``name`` may be a submodule);
    names that are not modules are dropped later, when no file defines them. Parsed once per
    file version (path, mtime, size).
    """
    return _imports_of(path.resolve(), root)


def _imports_of(path: Path, root: Path) -> frozenset[str]:
    stat = path.stat()
    return _parse_imports(path, root, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4096)
def _parse_imports(path: Path, root: Path, _mtime_ns: int, _size: int) -> frozenset[str]:
    tree = ast.parse(path.read_bytes(), filename=str(path))
    own = module_name(path, root)
    names: set[str] = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        if node.level:
            if own is None:
                continue  # a relative import outside the package cannot be resolved
            package = _package_of(path, own).split(".")
            if node.level - 1 >= len(package):
                continue
            base_parts = package[: len(package) - (node.level - 1)]
            base = ".".join(base_parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        names.add(base)
        names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return frozenset(n for n in names if n == PACKAGE or n.startswith(PACKAGE + "."))


def _with_parents(name: str) -> list[str]:
    """``a.b.c`` -> ``[a, a.b, a.b.c]``: importing a module runs each parent package first."""
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def import_closure(module_files: Iterable[Path], root: Path = REPO_ROOT) -> list[Path]:
    """``module_files`` plus every ``mla_var3`` module they import, transitively; sorted by label."""
    pending = [Path(p).resolve() for p in module_files]
    modules: set[str] = set()
    for path in list(pending):
        own = module_name(path, root)
        if own is not None:
            modules.add(own)
            pending.extend(f for n in _with_parents(own)[:-1] if (f := module_file(n, root)) is not None)
    seen: set[Path] = set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports_of(path, root):
            for parent in _with_parents(name):
                if parent in modules:
                    continue
                modules.add(parent)
                found = module_file(parent, root)
                if found is not None:
                    pending.append(found)
    return sorted(seen, key=lambda p: _label(p, root))


def _label(path: Path, root: Path) -> str:
    """The name a file is hashed under: its repo-relative POSIX path, or ``external/<name>``."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return f"external/{path.name}"


def source_hash(paths: Iterable[Path], extra: Iterable[str] = (), root: Path = REPO_ROOT) -> str:
    """SHA-256 over the files (in path order, each with its repo-relative path) and ``extra`` strings."""
    digest = hashlib.sha256()
    for label, path in sorted((_label(Path(p).resolve(), root), Path(p)) for p in paths):
        digest.update(f"file\0{label}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    for item in extra:
        digest.update(f"extra\0{item}\0".encode())
    return digest.hexdigest()


def upstream_marker(example: str, root: Path = REPO_ROOT) -> str:
    """``upstream:<path>:<sha256>`` of a CUTLASS example file, or ``upstream:<path>:missing``."""
    path = cutlass_dir(root) / example
    if not path.is_file():
        return f"upstream:{example}:missing"
    return f"upstream:{example}:{hashlib.sha256(path.read_bytes()).hexdigest()}"


def plan_fingerprint(plan_cls: type[KernelPlan], root: Path = REPO_ROOT) -> str:
    """The source hash of a plan: its import closure, the DSL version, its upstream example."""
    extra = [f"plan:{plan_cls.__module__}.{plan_cls.__qualname__}", f"{DSL_DISTRIBUTION}=={dsl_version()}"]
    example = plan_cls.upstream_example()
    if example is not None:
        extra.append(upstream_marker(example, root))
    return source_hash(import_closure(plan_cls.source_files(), root), extra, root)
