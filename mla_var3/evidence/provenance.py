"""Where a result came from: git commit, versions, the source and harness hashes; records built from runs.

- **Source hash** of a kernel: its plan's import closure (:mod:`mla_var3.kernel.fingerprint`),
  the DSL version, and for an imported plan the CUTLASS example named by **path and pinned
  commit** -- not by the file's bytes, so a clone without ``third_party/cutlass`` computes the
  same hash. The example's SHA-256 is kept beside it in the record (:class:`Upstream`) and
  compared only where a checkout exists (:mod:`mla_var3.evidence.status`).
- **Harness hash**: the code that checks, times and measures ceilings (:data:`HARNESS_FILES`).
  A run record or group record made by other harness code is stale.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from mla_var3.evidence.model import (
    SCHEMA_VERSION,
    AnnotationSection,
    NcuSection,
    Record,
    SanitizerSection,
    Upstream,
    scrub_paths,
)
from mla_var3.evidence.typed import dump, parse
from mla_var3.kernel.fingerprint import import_closure, source_hash
from mla_var3.profile.timeline import timeline_from_svg
from mla_var3.project import REPO_ROOT, cutlass_dir, dsl_version, read_pin

HARNESS_FILES = (
    "mla_var3/kernel/bench.py",
    "mla_var3/kernel/check.py",
    "mla_var3/kernel/runner.py",
    "mla_var3/evidence/group_run.py",
    "mla_var3/evidence/stats.py",
)


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
        sha = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no", "mla_var3"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("-dirty" if dirty else "")


def upstream_of(kernel: str) -> Upstream | None:
    """The CUTLASS example an imported plan loads: path, pinned commit, and its SHA-256 if the checkout has it."""
    from mla_var3.kernel.registry import get_plan

    example = get_plan(kernel).upstream_example()
    if example is None:
        return None
    path = cutlass_dir(REPO_ROOT) / example
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    return Upstream(example, read_pin(REPO_ROOT).commit, digest)


def kernel_source_hash(kernel: str) -> str:
    """The kernel's import closure, the DSL version and (imported plans) its example's path at the pin."""
    from mla_var3.kernel.registry import get_plan

    plan = get_plan(kernel)
    extra = [f"plan:{plan.__module__}.{plan.__qualname__}", f"nvidia-cutlass-dsl=={dsl_version()}"]
    example = plan.upstream_example()
    if example is not None:
        extra.append(f"upstream:{example}@{read_pin(REPO_ROOT).commit}")
    return source_hash(import_closure(plan.source_files()), extra)


def harness_hash(root: Path = REPO_ROOT) -> str:
    """Hash of the code that checks, times and measures ceilings (:data:`HARNESS_FILES` under ``root``)."""
    return source_hash([root / f for f in HARNESS_FILES], ["harness"], root)


def record_from_run(result: dict[str, Any], source: str, harness: str | None, sha: str, upstream: Upstream | None) -> Record:
    """A checked :class:`Record` from a kernel-lab ``RunResult.to_dict()``.

    The one place names differ between the kernel layer and records: the run's ``shape_key``
    is the record's ``config``, its ``config`` (the tuning) the record's ``tuning``, its
    ``check`` the record's ``correctness``. Machine-local paths are cut to file names.
    """
    run = result["mode"] == "run"
    device = result.get("device") or {}
    data = {
        "schema_version": SCHEMA_VERSION,
        "kernel": result["kernel"],
        "config": result["shape_key"],
        "device_slug": device["slug"] if run else f"compile-{result['arch']}",
        "mode": result["mode"],
        "mode_reason": result["mode_reason"],
        "arch": result["arch"],
        "backend": result["backend"],
        "dtype": result["dtype"],
        "shape": result["shape"],
        "tuning": result["config"],
        "data": result["data"],
        "source_hash": source,
        "harness_hash": harness if run else None,
        "upstream": upstream,
        "git_sha": sha,
        "date": result["date"],
        "versions": versions() | {"cuda": device.get("cuda"), "driver": device.get("driver")},
        "device": device if run else {"compiled_on": platform.node() or "cpu"},
        "compile": {k: v for k, v in result["compile"].items() if k != "entry"},
        "analysis": result.get("analysis"),
        "flops": result["flops"],
        "bytes": result["bytes"],
        "correctness": result.get("check"),
        "timing": result.get("timing"),
        "ceilings": result.get("ceilings"),
        "clocks": result.get("clocks"),
        "notes": result.get("notes", []),
        "census": result.get("census"),
    }
    return parse(Record, scrub_paths(dump(data)), f"run of {result['kernel']}/{result['shape_key']}")


SECTION_TYPES = {"ncu": NcuSection, "sanitizer": SanitizerSection, "annotation": AnnotationSection}


def section_from_profile(name: str, payload: dict[str, Any], sha: str) -> NcuSection | SanitizerSection | AnnotationSection:
    """A record section from a ``--prof_type`` result (``RunResult.profile[name]``), checked.

    Paths are cut to file names and the annotation's trace file (left on the measuring machine)
    is dropped. A timeline kept as a picture only is read back into spans
    (:func:`~mla_var3.profile.timeline.timeline_from_svg`): records keep data, pages draw it.
    """
    data = dict(payload) | {"git_sha": sha}
    if name == "annotation":
        data.pop("trace", None)
        timeline = data.get("timeline")
        if isinstance(timeline, dict) and "svg" in timeline:
            data["timeline"] = timeline_from_svg(timeline["svg"])
    return parse(SECTION_TYPES[name], scrub_paths(dump(data)), f"{name} section")
