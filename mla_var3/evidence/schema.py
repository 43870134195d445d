"""The evidence record: one JSON file per kernel x config x device, validated strictly.

``evidence/<kernel>/<config>/<device>.json`` where ``config`` is the shape key
(``m8192-n8192-k8192-bfloat16``) and ``device`` a slug (``nvidia-h200``, or
``compile-sm_100a`` for a GPU-free compile). Profiling results (``ncu``, ``sanitizer``,
``annotation``) are sections with their own date and provenance, so re-profiling never
overwrites the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
MODES = ("run", "compile")
PROFILE_SECTIONS = ("ncu", "sanitizer", "annotation", "timeline")

# key -> required type(s); nested dicts are checked by _check_section.
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema_version": int,
    "kernel": str,
    "config": str,
    "device_slug": str,
    "mode": str,
    "arch": str,
    "dtype": str,
    "shape": dict,
    "tuning": dict,
    "data": str,
    "source_hash": str,
    "git_sha": str,
    "date": str,
    "versions": dict,
    "device": dict,
    "compile": dict,
    "analysis": (dict, type(None)),
    "correctness": (dict, type(None)),
    "timing": (dict, type(None)),
    "ceilings": (dict, type(None)),
    "roofline": (dict, type(None)),
    "clocks": (dict, type(None)),
}
RUN_REQUIRED = ("correctness", "timing", "ceilings", "roofline")


class EvidenceError(Exception):
    """A malformed, misplaced or unknown evidence record; the message names the file and the fix."""


def validate(record: Any, where: str) -> dict[str, Any]:
    """The record if it is well-formed, else an :class:`EvidenceError` naming ``where``."""
    if not isinstance(record, dict):
        raise EvidenceError(f"{where}: an evidence record must be a JSON object")
    if record.get("schema_version") != SCHEMA_VERSION:
        raise EvidenceError(
            f"{where}: schema_version {record.get('schema_version')!r} is not {SCHEMA_VERSION}; "
            "re-run `python -m mla_var3.evidence verify --force` for this kernel"
        )
    for key, kind in REQUIRED.items():
        if key not in record:
            raise EvidenceError(f"{where}: missing field {key!r}")
        if not isinstance(record[key], kind):
            raise EvidenceError(f"{where}: field {key!r} has type {type(record[key]).__name__}")
    if record["mode"] not in MODES:
        raise EvidenceError(f"{where}: mode {record['mode']!r} is not one of {MODES}")
    if record["mode"] == "run":
        for key in RUN_REQUIRED:
            if record[key] is None:
                raise EvidenceError(f"{where}: a run record needs {key!r}")
        if record["correctness"]["passed"] and record["timing"] is None:
            raise EvidenceError(f"{where}: a passing run record needs timing")
    for key in ("source_hash", "git_sha", "date"):
        if not record[key]:
            raise EvidenceError(f"{where}: {key!r} is empty")
    for section in PROFILE_SECTIONS:
        if section in record and not (isinstance(record[section], dict) and record[section].get("date")):
            raise EvidenceError(f"{where}: section {section!r} needs its own 'date'")
    return record


def load(path: Path) -> dict[str, Any]:
    """Read and validate one record file; malformed JSON or fields -> EvidenceError naming it."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvidenceError(f"{path}: not a readable JSON evidence record ({exc}); delete it and re-verify") from exc
    record = validate(data, str(path))
    expected = (record["kernel"], record["config"], record["device_slug"] + ".json")
    if path.parts[-3:] != expected:
        raise EvidenceError(f"{path}: record says {'/'.join(expected)} but lies elsewhere; move or re-verify it")
    return record


def passed(record: dict[str, Any]) -> bool:
    """A compile record passes by existing; a run record when its correctness check passed."""
    if record["mode"] == "compile":
        return True
    return bool(record["correctness"] and record["correctness"].get("passed"))
