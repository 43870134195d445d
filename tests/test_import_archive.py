"""Import never loses data: each refusal is one line and writes nothing; sections and newer records survive."""

from __future__ import annotations

import dataclasses
import io
import json
import tarfile
from pathlib import Path

import pytest
from test_evidence import fake_env, record, record_data, run_data  # noqa: F401 - the fixture is used by name

from mla_var3.evidence.archive import export, import_archive
from mla_var3.evidence.model import NcuSection, Record
from mla_var3.evidence.store import load, save
from mla_var3.evidence.typed import EvidenceError, parse

NCU = NcuSection("k", "(1,1,1)", "(1,1,1)", "9.0", tc_pct=90.0, date="2026-11-30T12:00:00+00:00")


def _tar(path: Path, members: dict[str, bytes | None], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data or b""))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


def _json(**over: object) -> bytes:
    return json.dumps(record_data(**over)).encode()


def test_roundtrip_files_kernel_and_group_paths(fake_env: Path, tmp_path: Path) -> None:  # noqa: F811
    save(record(), fake_env)
    archive = tmp_path / "ev.tar.gz"
    assert export(fake_env, archive) == 1
    assert [p.relative_to(tmp_path / "in").as_posix() for p in import_archive(archive, tmp_path / "in")] == [
        "fake_good/n8-float32/compile-sm_100a.json"
    ]


@pytest.mark.parametrize(
    ("members", "links", "message"),
    [
        ({"../evil/n8-float32/compile-sm_100a.json": _json()}, None, "leaves the evidence folder"),
        ({"/abs/n8-float32/compile-sm_100a.json": _json()}, None, "leaves the evidence folder"),
        ({"fake_good/compile-sm_100a.json": _json()}, None, "expected <kernel>/<config>/<device>.json"),
        ({}, {"fake_good/n8-float32/compile-sm_100a.json": "/etc/passwd"}, "a link or special file"),
        ({"fake_good/n16-float32/compile-sm_100a.json": _json()}, None, "the record says fake_good/n8-float32"),
        ({"fake_good/n8-float32/compile-sm_100a.json": _json(timing={})}, None, "timing.median_us: missing"),
        ({"no_such/n8-float32/compile-sm_100a.json": _json(kernel="no_such")}, None, "unknown kernel 'no_such'"),
        ({"groups/no_such/n8-float32/nvidia-h200.json": b'{"group": "no_such"}'}, None, "missing"),
        ({"fake_good/n8-float32/compile-sm_100a.json": b"\xff"}, None, "not UTF-8"),
    ],
)  # fmt: skip
def test_each_refusal_is_one_line_and_writes_nothing(
    fake_env: Path, tmp_path: Path, members: dict, links: dict | None, message: str  # noqa: F811
) -> None:
    good = {"fake_good/n4-float32/compile-sm_100a.json": _json(config="n4-float32", shape={"n": 4})}
    archive = _tar(tmp_path / "bad.tar.gz", good | members, links)
    with pytest.raises(EvidenceError) as error:
        import_archive(archive, tmp_path / "in")
    assert message in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "in").exists()


def test_a_truncated_or_foreign_archive_is_refused(fake_env: Path, tmp_path: Path) -> None:  # noqa: F811
    for i in range(8):
        save(record(config=f"n{i + 1}-float32", shape={"n": i + 1}), fake_env)
    archive = tmp_path / "ev.tar.gz"
    export(fake_env, archive)
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(EvidenceError, match="not a complete, readable evidence archive"):
        import_archive(cut, tmp_path / "in")
    with pytest.raises(EvidenceError, match="holds no records"):
        import_archive(_tar(tmp_path / "empty.tar.gz", {}), tmp_path / "in")
    text = tmp_path / "notes.txt"
    text.write_text("not an archive")
    with pytest.raises(EvidenceError, match="not a complete, readable evidence archive"):
        import_archive(text, tmp_path / "in")
    assert not (tmp_path / "in").exists()


def test_an_older_record_never_replaces_a_newer_one(fake_env: Path, tmp_path: Path) -> None:  # noqa: F811
    newer = save(record(date="2026-12-01T00:00:00+00:00", git_sha="newer"), tmp_path / "here")
    archive = _tar(tmp_path / "old.tar.gz", {"fake_good/n8-float32/compile-sm_100a.json": _json(git_sha="older")})
    with pytest.raises(EvidenceError, match=r"is older than the one here .* \(pass --replace"):
        import_archive(archive, tmp_path / "here")
    assert load(newer).git_sha == "newer"
    import_archive(archive, tmp_path / "here", replace=True)
    assert load(newer).git_sha == "older"


def test_profile_sections_survive_a_run_without_them(fake_env: Path, tmp_path: Path) -> None:  # noqa: F811
    here = tmp_path / "here"
    old = parse(Record, run_data(date="2026-11-30T00:00:00+00:00"), "old")
    path = save(dataclasses.replace(old, ncu=NCU), here)
    new_run = json.dumps(run_data(date="2026-11-30T13:00:00+00:00", git_sha="rerun")).encode()
    archive = _tar(tmp_path / "new.tar.gz", {"fake_good/n8-float32/nvidia-h200.json": new_run})
    import_archive(archive, here)
    kept = load(path)
    assert kept.git_sha == "rerun" and kept.ncu == NCU
    import_archive(archive, here, replace=True)
    assert load(path).ncu is None
