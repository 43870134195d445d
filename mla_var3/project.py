"""Facts about the project itself, read in one place: where it lives, the CUTLASS pin, the DSL version.

Every layer (kernel, evidence, knowledge, hooks, noxfile) asks this module instead of deriving
a repository root, parsing ``third_party/cutlass.lock`` or locating CUTLASS on its own.

- ``REPO_ROOT``: the checkout that holds the ``mla_var3`` package.
- The pin: ``third_party/cutlass.lock`` (TOML: ``repository``, ``commit``, ``date``), read with
  :func:`read_pin`; a missing or malformed lock is a ``ValueError`` naming the file.
- Where CUTLASS is: ``$CUTLASS_DIR`` (relative paths from the repo root), else
  ``third_party/cutlass`` (``nox -s cutlass`` checks it out at the pinned commit). A local git
  mirror to check out from is ``$CUTLASS_GIT_DIR``.
- ``dsl_version()``: the installed ``nvidia-cutlass-dsl``, read without importing ``cutlass``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LOCK_FILE = "third_party/cutlass.lock"
CUTLASS_DIR_ENV = "CUTLASS_DIR"
CUTLASS_GIT_DIR_ENV = "CUTLASS_GIT_DIR"
DEFAULT_CUTLASS_DIR = Path("third_party/cutlass")
# The folder CUTLASS's CuTe DSL examples live in (and import their siblings from).
EXAMPLES_ROOT = "examples/python/CuTeDSL"
DSL_DISTRIBUTION = "nvidia-cutlass-dsl"


@dataclass(frozen=True)
class CutlassPin:
    """The CUTLASS commit the project reads, cites and imports."""

    repository: str
    commit: str
    date: str = ""

    @property
    def short(self) -> str:
        return self.commit[:7]

    def blob_url(self, path: str, lines: tuple[int, int] | None = None) -> str:
        """A link to ``path`` (optionally a line range) at the pinned commit."""
        anchor = ""
        if lines:
            anchor = f"#L{lines[0]}" if lines[0] == lines[1] else f"#L{lines[0]}-L{lines[1]}"
        return f"{self.repository.rstrip('/')}/blob/{self.commit}/{path}{anchor}"


def read_pin(root: Path = REPO_ROOT) -> CutlassPin:
    """The pin from ``third_party/cutlass.lock`` under ``root``."""
    lock = root / LOCK_FILE
    try:
        data = tomllib.loads(lock.read_text(encoding="utf-8"))
        return CutlassPin(str(data["repository"]), str(data["commit"]), str(data.get("date", "")))
    except (OSError, tomllib.TOMLDecodeError, KeyError) as error:
        raise ValueError(f"{LOCK_FILE}: cannot read the CUTLASS pin ({error}); restore the file from git") from None


def cutlass_dir(root: Path = REPO_ROOT) -> Path:
    """``$CUTLASS_DIR`` (relative paths from ``root``), else ``third_party/cutlass``; may not exist."""
    configured = os.environ.get(CUTLASS_DIR_ENV)
    path = Path(configured) if configured else DEFAULT_CUTLASS_DIR
    return path if path.is_absolute() else root / path


@cache
def dsl_version() -> str:
    """The installed CuTe DSL version, or ``"not-installed"``."""
    try:
        return metadata.version(DSL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "not-installed"


__all__ = [
    "CUTLASS_DIR_ENV",
    "CUTLASS_GIT_DIR_ENV",
    "DSL_DISTRIBUTION",
    "EXAMPLES_ROOT",
    "LOCK_FILE",
    "REPO_ROOT",
    "CutlassPin",
    "cutlass_dir",
    "dsl_version",
    "read_pin",
]
