"""The pinned CUTLASS commit (``third_party/cutlass.lock``): links to it, and a reader that checks citations.

Pages cite CUTLASS as ``path`` plus optional ``lines`` at the pinned commit. Links point at that
commit on GitHub (they are followed only when a reader clicks). Citations are checked against a
local copy when one exists: ``$CUTLASS_DIR`` or ``third_party/cutlass`` -- a checkout, a bare git
directory, or a plain file tree (``nox -s cutlass`` fetches it).
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE = "third_party/cutlass.lock"


@dataclass(frozen=True)
class CutlassPin:
    repository: str
    commit: str

    @property
    def short(self) -> str:
        return self.commit[:7]

    def blob_url(self, path: str, lines: tuple[int, int] | None = None) -> str:
        anchor = ""
        if lines:
            anchor = f"#L{lines[0]}" if lines[0] == lines[1] else f"#L{lines[0]}-L{lines[1]}"
        return f"{self.repository.rstrip('/')}/blob/{self.commit}/{path}{anchor}"


def read_pin(repo_root: Path) -> CutlassPin:
    """The pin from the lock file; a missing or malformed lock is a ``ValueError`` naming the file."""
    lock = repo_root / LOCK_FILE
    try:
        data = tomllib.loads(lock.read_text(encoding="utf-8"))
        return CutlassPin(str(data["repository"]), str(data["commit"]))
    except (OSError, tomllib.TOMLDecodeError, KeyError) as error:
        raise ValueError(f"{LOCK_FILE}: cannot read the CUTLASS pin ({error})") from None


class CutlassTree:
    """Line counts of files at the pinned commit, read from a local copy of CUTLASS."""

    def __init__(self, root: Path, commit: str) -> None:
        self.root = root
        self.commit = commit
        self._git_dir = _git_dir(root)
        self._counts: dict[str, int | None] = {}

    @classmethod
    def locate(cls, repo_root: Path, commit: str) -> CutlassTree | None:
        """The local copy named by ``$CUTLASS_DIR`` or ``third_party/cutlass``; ``None`` if there is none."""
        for candidate in (os.environ.get("CUTLASS_DIR"), repo_root / "third_party" / "cutlass"):
            if candidate and Path(candidate).is_dir():
                return cls(Path(candidate), commit)
        return None

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
