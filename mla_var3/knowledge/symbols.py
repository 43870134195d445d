"""Find the source of a Python symbol in the repository with griffe (static analysis: nothing is imported).

A symbol is written ``package.module:Qualified.name`` (the entry-point form), for example
``mla_var3.kernel.plan:KernelPlan.benchmark_kernel_argparse``.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import griffe


@dataclass(frozen=True)
class CodeSymbol:
    """A symbol's source lines (decorators included) and where they live, relative to the repository."""

    spec: str
    path: str
    first_line: int
    last_line: int
    source: str


class SymbolResolver:
    """Resolves ``module:qualname`` specs; modules are parsed once per resolver (one per build)."""

    def __init__(self, repo_root: Path) -> None:
        self.repo_root = repo_root.resolve()
        self._modules: dict[str, griffe.Module] = {}

    def resolve(self, spec: str) -> CodeSymbol:
        """The symbol's source; raises ``LookupError`` with a message that says what to fix."""
        module_name, sep, qualname = spec.partition(":")
        if not sep or not module_name or not qualname:
            raise LookupError(f"symbol {spec!r} must be written 'package.module:Qualified.name'")
        module = self._module(module_name)
        try:
            obj = module[qualname]
        except (KeyError, ValueError):
            members = ", ".join(sorted(n for n, m in module.members.items() if not m.is_alias)) or "none"
            raise LookupError(f"{module_name} has no symbol {qualname!r} (its top-level names: {members})") from None
        if obj.is_alias or obj.lineno is None or obj.endlineno is None or obj.filepath is None:
            raise LookupError(f"symbol {spec!r} is an import or has no source of its own; cite where it is defined")
        filepath = Path(obj.filepath).resolve()
        try:
            path = filepath.relative_to(self.repo_root).as_posix()
        except ValueError:
            raise LookupError(f"symbol {spec!r} lives outside the repository ({filepath})") from None
        lines = filepath.read_text(encoding="utf-8").splitlines()[obj.lineno - 1 : obj.endlineno]
        source = textwrap.dedent("\n".join(lines))
        return CodeSymbol(spec, path, obj.lineno, obj.endlineno, source)

    def _module(self, name: str) -> griffe.Module:
        top, _, rest = name.partition(".")
        if top not in self._modules:
            try:
                self._modules[top] = griffe.load(
                    top, search_paths=[str(self.repo_root)], allow_inspection=False, resolve_aliases=False
                )
            except (ImportError, griffe.GriffeError) as error:
                raise LookupError(f"package {top!r} not found under {self.repo_root} ({error})") from None
        try:
            module = self._modules[top].get_member(rest) if rest else self._modules[top]
        except (KeyError, ValueError):
            module = None
        if not isinstance(module, griffe.Module):
            raise LookupError(f"module {name!r} not found under {self.repo_root}")
        return module
