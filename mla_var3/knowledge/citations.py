"""Citations of CUTLASS at the pinned commit: ``cutlass:`` links in prose, and a reader that checks them.

Pages cite CUTLASS in front matter (``sources:``: ``path`` plus optional ``lines``) and in prose as
links with the ``cutlass:`` scheme, ``[dense_gemm.py:243-248](cutlass:examples/.../dense_gemm.py#L243-L248)``
or ``#L57``. A path without ``/`` is a file name resolved against the page's ``sources:`` (it must
match exactly one). The build rewrites each link to the file at the pinned commit on GitHub
(:meth:`mla_var3.project.CutlassPin.blob_url`); links are followed only when a reader clicks.
Paths and line ranges are checked against a local copy when one exists (:func:`mla_var3.project.cutlass_dir`:
``$CUTLASS_DIR`` or ``third_party/cutlass``) -- a checkout, a bare git directory, or a plain file tree.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mla_var3.project import cutlass_dir

SCHEME = "cutlass:"
LINK_RE = re.compile(r"^cutlass:(?P<path>[^#\s]+?)(?:#L(?P<first>\d+)(?:-L(?P<last>\d+))?)?$")
# Where a cutlass: target sits in a Markdown line: an inline link's destination or a reference definition.
TARGET_RE = re.compile(r"(?:(?<=\]\()|(?<=\]:)[ \t]*)(?P<target>cutlass:[^)\s]+)")


@dataclass(frozen=True)
class CutlassLink:
    """A ``cutlass:`` link target: the path as written and the line span (``None``: the whole file)."""

    target: str
    path: str
    lines: tuple[int, int] | None


def parse_link(target: str) -> CutlassLink:
    """``cutlass:path#L1-L2`` -> :class:`CutlassLink`; a malformed target is a ``ValueError`` saying the form."""
    match = LINK_RE.match(target)
    if not match:
        raise ValueError(f"CUTLASS link {target!r} must be 'cutlass:<path>#L<first>-L<last>' or 'cutlass:<path>#L<line>'")
    lines = None
    if match.group("first"):
        first = int(match.group("first"))
        last = int(match.group("last") or first)
        if first < 1 or last < first:
            raise ValueError(f"CUTLASS link {target!r}: lines must be 1-based with first <= last")
        lines = (first, last)
    return CutlassLink(target, match.group("path"), lines)


def resolve_path(link: CutlassLink, sources: Sequence[str]) -> str:
    """The repository path a link names: as written when it has a ``/``, else the one ``sources:`` path with
    that file name (a ``ValueError`` says which names matched)."""
    if "/" in link.path:
        return link.path
    matches = sorted({s for s in sources if posixpath.basename(s) == link.path})
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ValueError(f"CUTLASS link {link.target!r}: no path under 'sources:' has the file name {link.path!r}; "
                         "list the file there or write its full path")
    raise ValueError(f"CUTLASS link {link.target!r}: the file name {link.path!r} matches {len(matches)} sources "
                     f"({', '.join(matches)}); write the full path")


class CutlassTree:
    """Line counts of files at the pinned commit, read from a local copy of CUTLASS."""

    def __init__(self, root: Path, commit: str) -> None:
        self.root = root
        self.commit = commit
        self._git_dir = _git_dir(root)
        self._counts: dict[str, int | None] = {}

    @classmethod
    def locate(cls, repo_root: Path, commit: str) -> CutlassTree | None:
        """The local copy :func:`mla_var3.project.cutlass_dir` names; ``None`` if there is none."""
        root = cutlass_dir(repo_root)
        return cls(root, commit) if root.is_dir() else None

    @property
    def description(self) -> str:
        return f"{self.root} at {self.commit[:7]}" if self._git_dir else f"the file tree {self.root}"

    def missing_commit(self) -> bool:
        """``True`` when the copy is a git repository that does not hold the pinned commit."""
        if not self._git_dir:
            return False
        probe = ["git", "--git-dir", str(self._git_dir), "cat-file", "-e", f"{self.commit}^{{commit}}"]
        return subprocess.run(probe, capture_output=True).returncode != 0

    def line_counts(self, paths: set[str]) -> dict[str, int | None]:
        """Lines in each file (``None`` when the file does not exist at the commit)."""
        wanted = sorted(p for p in paths if p not in self._counts)
        if wanted:
            self._counts.update(self._read_git(wanted) if self._git_dir else self._read_tree(wanted))
        return {p: self._counts[p] for p in paths}

    def _read_tree(self, paths: list[str]) -> dict[str, int | None]:
        counts: dict[str, int | None] = {}
        for path in paths:
            file = self.root / path
            counts[path] = _count_lines(file.read_bytes()) if file.is_file() else None
        return counts

    def _read_git(self, paths: list[str]) -> dict[str, int | None]:
        request = "".join(f"{self.commit}:{p}\n" for p in paths).encode()
        result = subprocess.run(
            ["git", "--git-dir", str(self._git_dir), "cat-file", "--batch"],
            input=request,
            capture_output=True,
            check=True,
        )
        out = result.stdout
        counts: dict[str, int | None] = {}
        pos = 0
        for path in paths:
            header_end = out.index(b"\n", pos)
            header = out[pos:header_end].split()
            pos = header_end + 1
            if len(header) == 3 and header[1] == b"blob":
                size = int(header[2])
                counts[path] = _count_lines(out[pos : pos + size])
                pos += size + 1
            elif len(header) == 3:  # a tree or other object: skip its body, it is not a file
                pos += int(header[2]) + 1
                counts[path] = None
            else:
                counts[path] = None
        return counts


def _git_dir(root: Path) -> Path | None:
    if (root / ".git").exists():
        return root / ".git"
    if (root / "HEAD").is_file() and (root / "objects").is_dir():
        return root
    return None


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
