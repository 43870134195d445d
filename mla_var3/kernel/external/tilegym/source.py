"""TileGym's ``mla_decoding.py`` at a pinned commit, fetched from a git dir and imported with its kernel bodies unchanged.

    python -m mla_var3.kernel.external.tilegym.source     # fetch into build/cutile/tilegym/

The file is written verbatim to ``<cuTile store>/tilegym/mla_decoding.py`` (``build/cutile/``,
ignored by git and carried to the GPU beside the cubins) from ``$TILEGYM_GIT_DIR`` (a clone or
bare mirror holding :data:`TILEGYM_COMMIT`), and its SHA-256 is checked on every import. It
imports ``torch`` and ``tilegym.backend`` at module level for its autograd wrapper, which we do
not use: :func:`load_mla_decoding` supplies a no-op ``tilegym.backend.register_impl`` and,
where torch is absent (the export environment), the two torch names the module touches when it
is defined (``torch.autograd.Function``, ``torch.Tensor``). The ``@ct.kernel`` is used as is.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import types
from functools import cache
from pathlib import Path

from mla_var3.kernel.cutile.aot import store_dir
from mla_var3.kernel.errors import UserError

TILEGYM_REPOSITORY = "https://github.com/NVIDIA/TileGym"
TILEGYM_COMMIT = "75a14307776188ff0baf451cd9b9fc9fa3a87233"
TILEGYM_GIT_DIR_ENV = "TILEGYM_GIT_DIR"
MLA_DECODING = "src/tilegym/ops/cutile/mla_decoding.py"
# SHA-256 of MLA_DECODING at TILEGYM_COMMIT.
MLA_DECODING_SHA256 = "09e60348e26db156a82e9c1ce86fa580c7a6161e759deec67ec29077efca2c55"
KERNEL = "_naive_absorb_mla_transpose_kernel"
MODULE_NAME = "mla_var3_tilegym_mla_decoding"


class TileGymSourceError(UserError):
    """TileGym's source is missing or not the pinned file."""


def source_path() -> Path:
    return store_dir() / "tilegym" / "mla_decoding.py"


def fetch(git_dir: Path | None = None) -> Path:
    """Write the pinned ``mla_decoding.py`` from ``git_dir`` (default ``$TILEGYM_GIT_DIR``) into the store."""
    configured = git_dir or (Path(os.environ[TILEGYM_GIT_DIR_ENV]) if os.environ.get(TILEGYM_GIT_DIR_ENV) else None)
    if configured is None:
        raise TileGymSourceError(f"${TILEGYM_GIT_DIR_ENV} is not set: point it at a clone of {TILEGYM_REPOSITORY}")
    git = configured / ".git" if (configured / ".git").exists() else configured
    done = subprocess.run(["git", f"--git-dir={git}", "show", f"{TILEGYM_COMMIT}:{MLA_DECODING}"], capture_output=True)
    if done.returncode != 0:
        raise TileGymSourceError(f"{git} lacks TileGym {TILEGYM_COMMIT[:12]}:{MLA_DECODING} ({done.stderr.decode().strip()})")
    _check(done.stdout, f"{git}:{MLA_DECODING}")
    path = source_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(done.stdout)
    return path


def _check(data: bytes, where: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != MLA_DECODING_SHA256:
        raise TileGymSourceError(f"{where} has SHA-256 {digest[:16]}…, not the pinned file's {MLA_DECODING_SHA256[:16]}…; "
                                 f"fetch it again (python -m mla_var3.kernel.external.tilegym.source)")


def unavailable_reason() -> str | None:
    """Why TileGym's source cannot be loaded here, or ``None``."""
    path = source_path()
    if not path.exists():
        return (f"TileGym's source is not fetched ({path}): TILEGYM_GIT_DIR=<clone> "
                "python -m mla_var3.kernel.external.tilegym.source")
    return None


def _shims() -> dict[str, types.ModuleType]:
    backend = types.ModuleType("tilegym.backend")
    backend.register_impl = lambda *args, **kwargs: (lambda fn: fn)  # type: ignore[attr-defined]
    package = types.ModuleType("tilegym")
    package.backend = backend  # type: ignore[attr-defined]
    shims = {"tilegym": package, "tilegym.backend": backend}
    if importlib.util.find_spec("torch") is None:
        torch = types.ModuleType("torch")
        torch.autograd = types.SimpleNamespace(Function=object)  # type: ignore[attr-defined]
        torch.Tensor = object  # type: ignore[attr-defined]
        shims["torch"] = torch
    return shims


@cache
def load_mla_decoding() -> types.ModuleType:
    """TileGym's module, imported from the store (its ``@ct.kernel`` is :data:`KERNEL`)."""
    reason = unavailable_reason()
    if reason:
        raise TileGymSourceError(reason)
    path = source_path()
    _check(path.read_bytes(), str(path))
    shims = _shims()
    saved = {name: sys.modules.get(name) for name in shims}
    sys.modules.update(shims)
    try:
        spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[MODULE_NAME] = module  # inspect (cuTile reads the kernel's source) finds it by name
        spec.loader.exec_module(module)
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
    return module


def main() -> int:
    try:
        path = fetch()
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    print(f"fetched TileGym {TILEGYM_COMMIT[:12]}:{MLA_DECODING} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
