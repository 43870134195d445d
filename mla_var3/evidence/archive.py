"""Move records from the GPU machine (no .git) to here: one tar.gz out, checked on the way in."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from mla_var3.evidence.schema import EvidenceError, validate
from mla_var3.evidence.store import save
from mla_var3.kernel.errors import UserError
from mla_var3.kernel.registry import get_plan


def export(base: Path, archive: Path) -> int:
    """Pack every record under ``base`` into ``archive``; returns how many."""
    files = sorted(base.glob("*/*/*.json"))
    with tarfile.open(archive, "w:gz") as tar:
        for f in files:
            tar.add(f, arcname=str(f.relative_to(base)))
    return len(files)


def import_archive(archive: Path, base: Path | None = None) -> list[Path]:
    """Check every record in ``archive`` (well-formed, known kernel, placed right) and file them all, or none."""
    try:
        tar = tarfile.open(archive, "r:gz")
    except (OSError, tarfile.TarError) as exc:
        raise EvidenceError(f"{archive}: not a readable evidence archive ({exc})") from exc
    records = []
    with tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            where = f"{archive}:{member.name}"
            parts = Path(member.name).parts
            if len(parts) != 3 or not member.name.endswith(".json") or ".." in parts:
                raise EvidenceError(f"{where}: expected <kernel>/<config>/<device>.json")
            try:
                data = json.load(io.TextIOWrapper(tar.extractfile(member), encoding="utf-8"))  # type: ignore[arg-type]
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise EvidenceError(f"{where}: not valid JSON ({exc})") from exc
            record = validate(data, where)
            if (record["kernel"], record["config"], record["device_slug"] + ".json") != parts:
                raise EvidenceError(f"{where}: record names {record['kernel']}/{record['config']}/{record['device_slug']}")
            try:
                get_plan(record["kernel"])
            except UserError as exc:
                raise EvidenceError(f"{where}: {exc}") from exc
            records.append(record)
    return [save(r, base) for r in records]
