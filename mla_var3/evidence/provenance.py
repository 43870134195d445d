"""Where a result came from: git commit, versions, source hash; and building a record from a run."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from importlib import metadata
from typing import Any

from mla_var3.evidence.schema import SCHEMA_VERSION
from mla_var3.evidence.store import ROOT


def dsl_version() -> str:
    try:
        return metadata.version("nvidia-cutlass-dsl")
    except metadata.PackageNotFoundError:
        return "absent"


def versions() -> dict[str, str | None]:
    def ver(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {
        "nvidia-cutlass-dsl": ver("nvidia-cutlass-dsl"),
        "cuda-tile": ver("cuda-tile"),
        "torch": ver("torch"),
        "python": platform.python_version(),
    }


def git_sha() -> str:
    """The commit: ``$MLA_VAR3_GIT_SHA`` (GPU machine, no .git) or ``git rev-parse HEAD``, with ``-dirty``."""
    env = os.environ.get("MLA_VAR3_GIT_SHA")
    if env:
        return env
    try:
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "mla_var3"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("-dirty" if dirty else "")


def kernel_source_hash(kernel: str) -> str:
    """Hash of the kernel's import closure, its upstream example (imported plans) and the DSL version."""
    from mla_var3.kernel.fingerprint import plan_fingerprint
    from mla_var3.kernel.registry import get_plan

    digest = hashlib.sha256()
    digest.update(plan_fingerprint(get_plan(kernel)).encode())
    digest.update(f"\0nvidia-cutlass-dsl=={dsl_version()}".encode())
    return digest.hexdigest()


def build_record(result: dict[str, Any], source_hash: str, sha: str) -> dict[str, Any]:
    """An evidence record from a kernel-lab RunResult (``RunResult.to_dict()``)."""
    if result["mode"] == "run":
        device = dict(result["device"])
        slug = device["slug"]
    else:
        device = {"name": None, "compiled_on": platform.node() or "cpu", "gpu": result.get("device")}
        slug = f"compile-{result['arch']}"
    return {
        "schema_version": SCHEMA_VERSION,
        "kernel": result["kernel"],
        "config": result["shape_key"],
        "device_slug": slug,
        "mode": result["mode"],
        "mode_reason": result["mode_reason"],
        "arch": result["arch"],
        "backend": result["backend"],
        "dtype": result["dtype"],
        "shape": result["shape"],
        "tuning": result["config"],
        "data": result["data"],
        "source_hash": source_hash,
        "git_sha": sha,
        "date": result["date"],
        "versions": versions() | {"cuda": (result.get("device") or {}).get("cuda"), "driver": (result.get("device") or {}).get("driver")},
        "device": device,
        "compile": result["compile"],
        "analysis": result.get("analysis"),
        "correctness": result.get("check"),
        "timing": result.get("timing"),
        "ceilings": result.get("ceilings"),
        "roofline": result.get("roofline") and result["roofline"] | {"flops": result["flops"], "bytes": result["bytes"]},
        "clocks": result.get("clocks"),
        "notes": result.get("notes", []),
    } | dict(result.get("profile") or {})
