"""Locate and run the CUDA binary tools (``cuobjdump``, ``nvdisasm``) on a cubin held in memory.

The tools come from the pip packages ``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm``
(the ``analysis`` extra), which install them under ``site-packages/nvidia/<flavour>/bin``. A
CUDA toolkit on ``PATH`` is the fallback. Neither needs a GPU or a driver.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

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


def run_on_cubin(tool: str, args: list[str], cubin: bytes, timeout_s: float = 120.0) -> str:
    """Run ``tool args <cubin file>`` and return its stdout; :class:`AnalysisError` if it fails."""
    if not cubin:
        raise AnalysisError(f"{tool}: the cubin is empty (compile with --keep-cubin)")
    exe = find_tool(tool)
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
