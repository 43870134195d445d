"""Move records from the GPU machine (no .git) to here: one tar.gz out, checked on the way in.

Import is all or nothing and never loses data. It refuses, with one line and nothing written:
an unreadable or truncated archive; a member that is a link or special file, or whose name is
absolute, climbs out with ``..``, or is not ``<kernel>/<config>/<device>.json`` or
``groups/<group>/<config>/<device>.json``; a record that fails the model's checks or lies
elsewhere than it says; an unknown kernel or group; an archive without records; and -- unless
``replace`` -- a record **older** than the one it would replace. A record without ncu,
sanitizer or annotation sections keeps those of the record it replaces, unless ``replace``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import tarfile
import zlib
from pathlib import Path, PurePosixPath

from mla_var3.evidence.model import GROUPS_DIR, PROFILE_SECTIONS, GroupRecord, Record
from mla_var3.evidence.store import (
    AnyRecord,
    evidence_dir,
    load,
    read_json,
    record_files,
    relative_path,
    save,
)
from mla_var3.evidence.typed import EvidenceError
from mla_var3.kernel.errors import UserError


def export(base: Path, archive: Path, files: list[Path] | None = None) -> int:
    """Pack ``files`` (default: every record under ``base``) into ``archive``; returns how many."""
    files = record_files(base) if files is None else sorted(set(files))
    try:
        with tarfile.open(archive, "w:gz") as tar:
            for f in files:
                tar.add(f, arcname=f.relative_to(base).as_posix(), recursive=False)
    except OSError as exc:
        raise EvidenceError(f"cannot write the archive {archive}: {exc.strerror or exc}; give a writable path") from None
    return len(files)


def check_writable(archive: Path) -> None:
    """Fail now, before hours of work, if ``archive`` could not be written."""
    folder = archive.parent if str(archive.parent) else Path(".")
    if archive.is_dir() or not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise EvidenceError(f"cannot write the archive {archive}: its folder is missing or not writable; give a writable path")


def _expected_name(name: str, where: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise EvidenceError(f"{where}: the path leaves the evidence folder; refusing the archive")
    depth = 4 if path.parts and path.parts[0] == GROUPS_DIR else 3
    if len(path.parts) != depth or path.suffix != ".json":
        raise EvidenceError(f"{where}: expected <kernel>/<config>/<device>.json or {GROUPS_DIR}/<group>/<config>/<device>.json")
    return path


def read_archive(archive: Path) -> list[AnyRecord]:
    """Every record in ``archive``, each checked (see the module docstring); raises on the first problem."""
    records: list[AnyRecord] = []
    seen: set[str] = set()
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                where = f"{archive}:{member.name}"
                if member.isdir():
                    continue
                if not member.isfile():
                    raise EvidenceError(f"{where}: a link or special file, not a record; refusing the archive")
                name = _expected_name(member.name, where)
                if name.as_posix() in seen:
                    raise EvidenceError(f"{where}: appears twice in the archive")
                seen.add(name.as_posix())
                stream = tar.extractfile(member)
                assert stream is not None  # a regular file always has one
                try:
                    text = stream.read().decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise EvidenceError(f"{where}: not UTF-8 text ({exc})") from None
                record = read_json(text, where)
                if relative_path(record).as_posix() != name.as_posix():
                    raise EvidenceError(f"{where}: the record says {relative_path(record).as_posix()}")
                _check_known(record, where)
                records.append(record)
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise EvidenceError(f"{archive}: not a complete, readable evidence archive ({exc}); nothing imported") from None
    if not records:
        raise EvidenceError(f"{archive}: holds no records; nothing imported")
    return records


def _check_known(record: AnyRecord, where: str) -> None:
    if isinstance(record, GroupRecord):
        from mla_var3.evidence.groups import get_group

        get_group(record.group)
        return
    from mla_var3.kernel.registry import get_plan

    try:
        get_plan(record.kernel)
    except UserError as exc:
        raise EvidenceError(f"{where}: {exc}") from None


def _merge(new: AnyRecord, old: AnyRecord | None, where: str, replace: bool) -> AnyRecord:
    """``new`` as it should be filed over ``old`` (or an error that says why it may not be)."""
    if old is None or replace:
        return new
    if dt.datetime.fromisoformat(old.date) > dt.datetime.fromisoformat(new.date):
        raise EvidenceError(
            f"{where}: the archive's record ({new.date}) is older than the one here ({old.date}); "
            "nothing imported (pass --replace to overwrite it)"
        )
    if isinstance(new, Record) and isinstance(old, Record):
        kept = {s: getattr(old, s) for s in PROFILE_SECTIONS if getattr(new, s) is None and getattr(old, s) is not None}
        return dataclasses.replace(new, **kept)
    return new


def import_archive(archive: Path, base: Path | None = None, replace: bool = False) -> list[Path]:
    """Check every record in ``archive`` and file them all, or none; returns the files written."""
    root = base or evidence_dir()
    filed = []
    for record in read_archive(archive):
        target = root / relative_path(record)
        old = None
        if target.exists():
            try:
                old = load(target)
            except EvidenceError as exc:
                if not replace:
                    raise EvidenceError(f"{exc}; nothing imported (pass --replace to overwrite it)") from None
        filed.append(_merge(record, old, f"{archive}:{relative_path(record).as_posix()}", replace))
    return [save(r, root) for r in filed]
