"""The kernel lab's command line as a newcomer first runs it, on this machine without a GPU.

Each command runs as its own process (``python -m mla_var3.kernel ...``), as a reader would type it,
and the page shows its real output. Compiling for sm_90a needs no GPU: the DSL compiles from fake
tensors and ``cuobjdump``/``nvdisasm`` read the cubin.
"""

from __future__ import annotations

import subprocess
import sys

COMMANDS = (
    ["elementwise_add", "--compile-only", "--arch", "sm_90a"],
    ["elementwise_add", "--compile-only", "--arch", "sm_90a", "--dtype", "float32", "--n", "1000"],
    ["elementwise_add", "--check"],
)


def run(args: list[str]) -> str:
    """``$ python -m mla_var3.kernel <args>`` and what it printed (stdout and stderr, exit status if not 0)."""
    proc = subprocess.run(
        [sys.executable, "-m", "mla_var3.kernel", *args], capture_output=True, text=True, timeout=300, check=False
    )
    out = (proc.stdout + proc.stderr).strip()
    status = "" if proc.returncode == 0 else f"\n[exit status {proc.returncode}]"
    return f"$ python -m mla_var3.kernel {' '.join(args)}\n{out}{status}"


def session() -> str:
    """Every command of :data:`COMMANDS` with its output, as a fenced console block."""
    return "```console\n" + "\n\n".join(run(args) for args in COMMANDS) + "\n```"


if __name__ == "__main__":
    print(session())
