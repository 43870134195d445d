"""Locate and run the CUDA binary tools (``cuobjdump``, ``nvdisasm``) on a cubin held in memory.

The tools come from the pip packages ``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm``
(the ``analysis`` extra), which install them under ``site-packages/nvidia/<flavour>/bin``. A
CUDA toolkit on ``PATH`` is the fallback. Neither needs a GPU or a driver.

A tool's output depends only on the tool, its arguments and the cubin's bytes, and one run costs a
process start (a tenth to half a second for a large cubin), so :func:`run_on_cubin` keeps the
outputs of the latest runs in memory (:data:`MEMO_BYTES` at most), keyed by the tool's path, the
arguments and the cubin's SHA-256: reading the resources and the SASS of one binary from several
places disassembles it once. Where ``$MLA_VAR3_TOOL_CACHE`` names a folder (a test run sets one for
its workers and the site builds it starts), outputs are also kept there on disk, keyed as in
memory plus the tool binary's size and mtime, so processes share them too. Failures are never kept.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections import OrderedDict
from functools import cache
from pathlib import Path

from mla_var3.atomic_file import write_atomic

INSTALL_HINT = (
    "install the analysis extra (pip install -e '.[analysis]': nvidia-cuda-cuobjdump and "
    "nvidia-cuda-nvdisasm) or put a CUDA toolkit's bin/ on PATH"
)
# Where the pip wheels put the binaries, newest CUDA first.
_PIP_BIN_DIRS = ("cu13/bin", "cu12/bin", "cuda_cuobjdump/bin", "cuda_nvdisasm/bin")


class AnalysisError(RuntimeError):
    """A CUDA binary tool is missing or failed on a cubin; the message says which and why."""


class ToolNotFoundError(AnalysisError):
    """``cuobjdump`` or ``nvdisasm`` is not installed."""


@cache
def find_tool(name: str) -> Path:
    """The path of CUDA tool ``name`` (pip wheel first, then ``PATH``), or :class:`ToolNotFoundError`."""
    try:
        import nvidia  # namespace package of the NVIDIA pip wheels
    except ImportError:
        roots: list[str] = []
    else:
        roots = list(getattr(nvidia, "__path__", []))
    for root in roots:
        for sub in _PIP_BIN_DIRS:
            candidate = Path(root) / sub / name
            if candidate.is_file():
                return candidate
    on_path = shutil.which(name)
    if on_path:
        return Path(on_path)
    raise ToolNotFoundError(f"{name} not found: {INSTALL_HINT}")


TOOL_CACHE_ENV = "MLA_VAR3_TOOL_CACHE"  # a folder for tool outputs shared by processes (module docstring)
MEMO_BYTES = 256 << 20  # characters of tool output kept in memory, newest first
_memo: OrderedDict[tuple[str, tuple[str, ...], str], str] = OrderedDict()


def run_on_cubin(tool: str, args: list[str], cubin: bytes, timeout_s: float = 120.0) -> str:
    """Run ``tool args <cubin file>`` and return its stdout; :class:`AnalysisError` if it fails.
    The same tool, arguments and cubin again answer from memory (module docstring)."""
    if not cubin:
        raise AnalysisError(f"{tool}: the cubin is empty (compile with --keep-cubin)")
    exe = find_tool(tool)
    key = (str(exe), tuple(args), hashlib.sha256(cubin).hexdigest())
    if key in _memo:
        _memo.move_to_end(key)
        return _memo[key]
    on_disk = _disk_path(exe, key)
    if on_disk is not None and on_disk.is_file():
        output = on_disk.read_text(encoding="utf-8")
    else:
        output = _run(exe, tool, args, cubin, timeout_s)
        if on_disk is not None:
            write_atomic(on_disk, output)
    _memo[key] = output
    while sum(len(text) for text in _memo.values()) > MEMO_BYTES and len(_memo) > 1:
        _memo.popitem(last=False)
    return output


def _run(exe: Path, tool: str, args: list[str], cubin: bytes, timeout_s: float) -> str:
    with tempfile.TemporaryDirectory(prefix="mla_var3_cubin_") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run(
            [str(exe), *args, str(path)], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise AnalysisError(
            f"{tool} {' '.join(args)} failed ({proc.returncode}): {detail[-1] if detail else 'no output'}"
        )
    return proc.stdout


def _disk_path(exe: Path, key: tuple[str, tuple[str, ...], str]) -> Path | None:
    """Where ``key``'s output is kept on disk, or None when no cache folder is set."""
    folder = os.environ.get(TOOL_CACHE_ENV)
    if not folder:
        return None
    stat = exe.stat()
    ident = "\0".join((*key[:1], *key[1], key[2], str(stat.st_size), str(stat.st_mtime_ns)))
    return Path(folder) / f"{hashlib.sha256(ident.encode()).hexdigest()}.txt"
