"""Run an external profiling tool with a wall-clock limit, killing its whole process tree.

``ncu`` and ``compute-sanitizer`` start the profiled Python process as their child; a plain
``subprocess.run(timeout=...)`` would kill only the tool and leave a deadlocked kernel's
process behind. Each tool therefore runs in its own session and the timeout kills the group.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mla_var3.profile.errors import ProfileError


@dataclass(frozen=True)
class Completed:
    """What a tool run left: its exit status (None on timeout) and its two output streams."""

    command: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool


def require_tool(name: str) -> str:
    """The path of executable ``name``, or a :class:`ProfileError` that says how to get it."""
    path = shutil.which(name)
    if path is None:
        raise ProfileError(
            f"`{name}` is not on PATH; it ships with the CUDA toolkit "
            f"(add its bin/ directory to PATH, e.g. /usr/local/cuda/bin)"
        )
    return path


def run_tool(
    command: Sequence[str],
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Completed:
    """Run ``command``; after ``timeout_s`` seconds kill its process group and report a timeout."""
    with subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            return Completed(tuple(command), None, stdout, stderr, timed_out=True)
    return Completed(tuple(command), proc.returncode, stdout, stderr, timed_out=False)
