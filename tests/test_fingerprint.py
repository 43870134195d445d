"""Source fingerprints: the import closure, what changes the hash and what does not."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import ClassVar

import pytest

from mla_var3.kernel import fingerprint
from mla_var3.kernel.fingerprint import import_closure, plan_fingerprint, source_hash

# A miniature package tree: the plan imports absolutely, relatively, lazily (inside a
# function) and under TYPE_CHECKING; the CLI imports the plan's layer, never the reverse.
TREE = {
    "mla_var3/__init__.py": '"""root"""\n',
    "mla_var3/kernel/__init__.py": "from mla_var3.kernel.base import Base\n",
    "mla_var3/kernel/base.py": "class Base: ...\n",
    "mla_var3/kernel/helpers.py": "def twice(x):\n    return 2 * x\n",
    "mla_var3/kernel/typing_only.py": "Alias = int\n",
    "mla_var3/kernel/cli.py": "from mla_var3.kernel import runner\n",
    "mla_var3/kernel/runner.py": "RUN = 1\n",
    "mla_var3/fam/__init__.py": "",
    "mla_var3/fam/variant/__init__.py": "from .plan import Plan\n",
    "mla_var3/fam/variant/plan.py": (
        "from typing import TYPE_CHECKING\n"
        "from mla_var3.kernel import base\n"
        "if TYPE_CHECKING:\n"
        "    from mla_var3.kernel.typing_only import Alias\n"
        "def build():\n"
        "    from . import kernel_impl\n"
        "    return kernel_impl\n"
    ),
    "mla_var3/fam/variant/kernel_impl.py": "import cutlass\nfrom ...kernel.helpers import twice\n",
    "mla_var3/unrelated.py": "X = 1\n",
    "docs/page.md": "# page\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel, text in TREE.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def closure_labels(root: Path) -> list[str]:
    return [
        p.relative_to(root).as_posix() for p in import_closure([root / "mla_var3/fam/variant/plan.py"], root)
    ]


def test_closure_follows_absolute_relative_and_lazy_imports(tree: Path) -> None:
    assert closure_labels(tree) == [
        "mla_var3/__init__.py",
        "mla_var3/fam/__init__.py",
        "mla_var3/fam/variant/__init__.py",
        "mla_var3/fam/variant/kernel_impl.py",
        "mla_var3/fam/variant/plan.py",
        "mla_var3/kernel/__init__.py",
        "mla_var3/kernel/base.py",
        "mla_var3/kernel/helpers.py",
    ]  # not: typing_only (TYPE_CHECKING), cli and runner (nothing the plan imports), unrelated, cutlass


def _hash(root: Path) -> str:
    return source_hash(import_closure([root / "mla_var3/fam/variant/plan.py"], root), ["dsl 1"], root)


@pytest.mark.parametrize(
    "edited",
    ["mla_var3/kernel/helpers.py", "mla_var3/kernel/__init__.py", "mla_var3/fam/variant/kernel_impl.py"],
)
def test_editing_a_closure_file_changes_the_hash(tree: Path, edited: str) -> None:
    before = _hash(tree)
    (tree / edited).write_text((tree / edited).read_text() + "# edited\n")
    assert _hash(tree) != before


@pytest.mark.parametrize(
    "edited",
    ["mla_var3/unrelated.py", "mla_var3/kernel/cli.py", "mla_var3/kernel/typing_only.py", "docs/page.md"],
)
def test_editing_another_file_keeps_the_hash(tree: Path, edited: str) -> None:
    before = _hash(tree)
    (tree / edited).write_text((tree / edited).read_text() + "# edited\n")
    assert _hash(tree) == before


def test_a_new_import_widens_the_closure(tree: Path) -> None:
    before = _hash(tree)
    plan = tree / "mla_var3/fam/variant/plan.py"
    plan.write_text(plan.read_text() + "from mla_var3 import unrelated\n")
    assert "mla_var3/unrelated.py" in closure_labels(tree)
    after = _hash(tree)
    (tree / "mla_var3/unrelated.py").write_text("X = 2\n")
    assert after != before and _hash(tree) != after


def test_hash_is_order_free_and_covers_paths_and_extras(tree: Path) -> None:
    files = import_closure([tree / "mla_var3/fam/variant/plan.py"], tree)
    assert source_hash(files, ["a"], tree) == source_hash(list(reversed(files)), ["a"], tree)
    assert source_hash(files, ["a"], tree) != source_hash(files, ["b"], tree)
    # Same content under another path is another source.
    (tree / "mla_var3/kernel/helpers2.py").write_text((tree / "mla_var3/kernel/helpers.py").read_text())
    renamed = [tree / "mla_var3/kernel/helpers2.py" if p.name == "helpers.py" else p for p in files]
    assert source_hash(renamed, [], tree) != source_hash(files, [], tree)


class _Plan:
    """Just what plan_fingerprint reads from a plan class."""

    files: ClassVar[tuple[Path, ...]] = ()
    example: ClassVar[str | None] = None

    @classmethod
    def source_files(cls) -> tuple[Path, ...]:
        return cls.files

    @classmethod
    def upstream_example(cls) -> str | None:
        return cls.example


def test_upstream_example_enters_the_fingerprint(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Imported(_Plan):
        files = (tree / "mla_var3/fam/variant/plan.py",)
        example = "examples/python/CuTeDSL/x/example.py"

    cutlass_dir = tmp_path / "cutlass_checkout"
    monkeypatch.setenv("CUTLASS_DIR", str(cutlass_dir))
    missing = plan_fingerprint(Imported, tree)  # type: ignore[arg-type]
    example = cutlass_dir / Imported.example
    example.parent.mkdir(parents=True)
    example.write_text("def run(): ...\n")
    present = plan_fingerprint(Imported, tree)  # type: ignore[arg-type]
    example.write_text("def run(): return 1\n")
    edited = plan_fingerprint(Imported, tree)  # type: ignore[arg-type]
    assert len({missing, present, edited}) == 3
    digest = hashlib.sha256(example.read_bytes()).hexdigest()
    assert fingerprint.upstream_marker(Imported.example, tree) == f"upstream:{Imported.example}:{digest}"
    monkeypatch.delenv("CUTLASS_DIR")
    assert fingerprint.cutlass_dir(tree) == tree / "third_party" / "cutlass"


def test_dsl_version_enters_the_fingerprint(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Local(_Plan):
        files = (tree / "mla_var3/fam/variant/plan.py",)

    before = plan_fingerprint(Local, tree)  # type: ignore[arg-type]
    monkeypatch.setattr(fingerprint, "dsl_version", lambda: "9.9.9")
    assert plan_fingerprint(Local, tree) != before  # type: ignore[arg-type]


def test_real_plan_closure() -> None:
    from mla_var3.kernel.cute_python.elementwise.add.vectorized import PLAN

    labels = {p.relative_to(fingerprint.REPO_ROOT).as_posix() for p in import_closure(PLAN.source_files())}
    package = "mla_var3/kernel/cute_python/elementwise/add/vectorized/"
    for rel in (
        package + "plan.py",
        package + "kernel.py",  # imported lazily inside plan()
        package + "__init__.py",
        "mla_var3/kernel/backends.py",
        "mla_var3/kernel/plan.py",
        "mla_var3/kernel/tensors.py",
    ):
        assert rel in labels, rel
    drivers = {"mla_var3/kernel/cli.py", "mla_var3/kernel/runner.py", "mla_var3/kernel/registry.py", "mla_var3/kernel/compile_cache.py"}
    assert not drivers & labels  # what drives kernels imports them, never the reverse
    assert not any("gemm" in label for label in labels)
    assert plan_fingerprint(PLAN) == plan_fingerprint(PLAN)
