"""Where records live and how they are read and written, atomically and checked.

``evidence/<kernel>/<config>/<device>.json`` for a kernel, ``evidence/groups/<group>/<config>/<device>.json``
for a comparison group (:mod:`mla_var3.evidence.model`). Reading checks every field and that the
record lies where it says; a problem is an :class:`EvidenceError` naming the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mla_var3.atomic_file import write_atomic
from mla_var3.evidence.model import GROUPS_DIR, GroupRecord, Record, record_from_json, record_to_json
from mla_var3.evidence.typed import EvidenceError, dumps
from mla_var3.project import REPO_ROOT

AnyRecord = Record | GroupRecord


def evidence_dir() -> Path:
    """The evidence folder (``$MLA_VAR3_EVIDENCE_DIR`` overrides, for tests and GPU staging)."""
    return Path(os.environ.get("MLA_VAR3_EVIDENCE_DIR", REPO_ROOT / "evidence"))


def relative_path(record: AnyRecord) -> Path:
    """Where a record belongs under the evidence folder."""
    if isinstance(record, GroupRecord):
        return Path(GROUPS_DIR, record.group, record.config, f"{record.device_slug}.json")
    return Path(record.kernel, record.config, f"{record.device_slug}.json")


def record_path(kernel: str, config: str, device_slug: str, base: Path | None = None) -> Path:
    return (base or evidence_dir()) / kernel / config / f"{device_slug}.json"


def record_files(base: Path | None = None) -> list[Path]:
    """Every record file: ``<kernel>/<config>/<device>.json`` and ``groups/<group>/<config>/<device>.json``."""
    root = base or evidence_dir()
    kernels = [p for p in root.glob("*/*/*.json") if p.relative_to(root).parts[0] != GROUPS_DIR]
    return sorted(kernels + list(root.glob(f"{GROUPS_DIR}/*/*/*.json")))


def read_json(text: str, where: str) -> AnyRecord:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvidenceError(f"{where}: not valid JSON ({exc}); delete it and re-verify") from exc
    return record_from_json(data, where)


# Parsed records by (path, file text): a site build reads each group record once per directive that shows
# it (hundreds of times); keyed by the text itself, a rewritten file is parsed again. Records are frozen.
_PARSED: dict[tuple[str, str], AnyRecord] = {}
_PARSED_MAX = 4096


def load(path: Path) -> AnyRecord:
    """Read and check one record file; a malformed or misplaced record is an error naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceError(f"{path}: not a readable evidence record ({exc})") from exc
    key = (str(path), text)
    if key in _PARSED:
        return _PARSED[key]
    record = read_json(text, str(path))
    expected = relative_path(record)
    if path.parts[-len(expected.parts) :] != expected.parts:
        raise EvidenceError(f"{path}: record says {expected.as_posix()} but lies elsewhere; move or re-verify it")
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[key] = record
    return record


def save(record: AnyRecord, base: Path | None = None) -> Path:
    """Write one record where it belongs; returns its path."""
    path = (base or evidence_dir()) / relative_path(record)
    write_atomic(path, dumps(record_to_json(record)))
    return path


def records_for(kernel: str, config: str, base: Path | None = None) -> list[Record]:
    """Every device's record for one kernel and config (strict: a bad file raises)."""
    folder = (base or evidence_dir()) / kernel / config
    return [load(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []  # type: ignore[misc]


def group_records_for(group: str, config: str, base: Path | None = None) -> list[GroupRecord]:
    """Every device's record of one comparison group at one config."""
    folder = (base or evidence_dir()) / GROUPS_DIR / group / config
    return [load(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []  # type: ignore[misc]


def all_records(base: Path | None = None) -> list[AnyRecord]:
    """Every record under the evidence folder (strict)."""
    return [load(p) for p in record_files(base)]
