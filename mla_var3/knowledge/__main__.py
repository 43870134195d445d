"""``python -m mla_var3.knowledge``: ``new`` scaffolds a page from its template, ``lint`` checks every page.

    python -m mla_var3.knowledge new multistage-tma-pipeline --kind optimization --scope cute-dsl
    python -m mla_var3.knowledge lint

Exit status: 0 done; 1 pages with problems (each listed as file:line); 2 a bad request (one line
saying what to change). ``new`` needs only the page model (``pip install .[pages]``: no torch, no
MkDocs), which is what ``nox -s new-pattern`` installs; ``lint`` also reads code with griffe.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mla_var3.knowledge.errors import KnowledgeError
from mla_var3.knowledge.scaffold import ScaffoldError, new_page
from mla_var3.knowledge.schema import ARCHS, KINDS, SCOPES
from mla_var3.project import read_pin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mla_var3.knowledge", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root (default: the current directory)")
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser("new", help="write a new page from the template of its kind")
    new.add_argument("id", help="the page id and file name, a lowercase slug")
    new.add_argument("--kind", required=True, choices=KINDS)
    new.add_argument("--scope", choices=SCOPES, help="required for optimization and anti-pattern pages")
    new.add_argument("--title", help="page title (default: from the id)")
    new.add_argument("--arch", action="append", default=[], choices=ARCHS, help="repeat for several")
    new.add_argument("--tag", action="append", default=[], help="a tag from docs/knowledge/tags.yml; repeat for several")
    lint = commands.add_parser("lint", help="check every page: schema, snippets, directives, citations, template "
                               "text left in, hand-typed measurements")
    lint.add_argument("docs", nargs="?", default="docs", help="the docs folder, relative to --root (default: docs)")
    lint.add_argument("--no-citations", action="store_true", help="skip checking CUTLASS citations")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    docs_dir = root / (args.docs if args.command == "lint" else "docs")
    try:
        if args.command == "new":
            path = new_page(docs_dir, root, args.id, args.kind, args.scope, args.title, args.arch, args.tag)
            print(f"wrote {path.relative_to(root)}; replace its italic instructions, then build (nox -s docs) and check it (nox -s lint)")
            return 0
        return _lint(docs_dir, root, citations=not args.no_citations)
    except ScaffoldError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (KnowledgeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _lint(docs_dir: Path, root: Path, citations: bool) -> int:
    # Imported here, not above: `new` runs in the light page-model environment, without griffe.
    from mla_var3.knowledge.checks import lint_site
    from mla_var3.knowledge.citations import CutlassTree
    from mla_var3.knowledge.pages import load_site
    from mla_var3.knowledge.symbols import SymbolResolver

    site = load_site(docs_dir, root)
    cutlass = CutlassTree.locate(root, read_pin(root).commit) if citations else None
    problems = lint_site(site, SymbolResolver(root), cutlass)
    if problems:
        raise KnowledgeError(problems)
    note = f"citations checked against {cutlass.description}" if cutlass else (
        "citations not checked (no CUTLASS copy: set CUTLASS_DIR or run nox -s cutlass)")
    print(f"{len(site.pages)} pages OK; {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
