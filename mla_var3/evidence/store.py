"""Where records live and how they are written: ``evidence/<kernel>/<config>/<device>.json``, atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from mla_var3.evidence.schema import EvidenceError, load, validate

ROOT = Path(__file__).resolve().parents[2]


def evidence_dir() -> Path:
    """The evidence folder (``$MLA_VAR3_EVIDENCE_DIR`` overrides, for tests and GPU staging)."""
    return Path(os.environ.get("MLA_VAR3_EVIDENCE_DIR", ROOT / "evidence"))


def record_path(kernel: str, config: str, device_slug: str, base: Path | None = None) -> Path:
    return (base or evidence_dir()) / kernel / config / f"{device_slug}.json"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(record: dict[str, Any], base: Path | None = None) -> Path:
    """Validate and write one record; returns its path."""
    validate(record, f"record for {record.get('kernel')}/{record.get('config')}")
    path = record_path(record["kernel"], record["config"], record["device_slug"], base)
    write_atomic(path, json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")
    return path


def records_for(kernel: str, config: str, base: Path | None = None) -> list[dict[str, Any]]:
    """Every device's record for one kernel and config (strict: a bad file raises)."""
    folder = (base or evidence_dir()) / kernel / config
    return [load(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


def all_records(base: Path | None = None) -> list[dict[str, Any]]:
    """Every record under the evidence folder (strict)."""
    root = base or evidence_dir()
    return [load(p) for p in sorted(root.glob("*/*/*.json"))]


def merge_section(path: Path, section: str, payload: dict[str, Any]) -> None:
    """Add or replace one profiling section of an existing record, keeping the run."""
    record = load(path)
    if "date" not in payload:
        raise EvidenceError(f"{path}: section {section!r} needs a 'date'")
    record[section] = payload
    write_atomic(path, json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")
