"""Group records keep per-round medians (schema 3); migrate upgrades a schema-2 record, which held every launch."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_evidence import fake_env  # noqa: F401 - the fixture is used by name
from test_evidence_render import CHECK, _group_run, pair  # noqa: F401

from mla_var3.evidence.group_run import round_medians
from mla_var3.evidence.groups import Group
from mla_var3.evidence.migrate import migrate
from mla_var3.evidence.model import GroupRecord, record_from_json
from mla_var3.evidence.store import load, save
from mla_var3.evidence.typed import EvidenceError, dump, dumps
from mla_var3.evidence.verify import group_record


def test_a_record_keeps_each_rounds_medians_and_migrate_upgrades_the_older_form(pair: Group, fake_env: Path) -> None:  # noqa: F811
    run = _group_run(1.05)
    record = group_record(pair, "n8-float32", run, {"fake_good": CHECK, "fake_raises": CHECK})
    for member in ("fake_good", "fake_raises"):
        assert [r.median_us[member] for r in record.rounds] == round_medians(run.rounds, member)
    path = save(record, fake_env)
    saved = load(path)  # floats as a record keeps them

    old = dump(record) | {"schema_version": 2, "rounds": [dump(r) for r in run.rounds]}  # per-launch times
    del old["source_hash"]  # schema 2 had none
    path.write_text(dumps(old), encoding="utf-8")
    with pytest.raises(EvidenceError, match="migrate` upgrades a schema-2 group record"):
        record_from_json(old, str(path))
    assert migrate(fake_env) == [path]
    upgraded = load(path)
    assert isinstance(upgraded, GroupRecord) and upgraded.schema_version == 3
    assert upgraded.source_hash == record.source_hash  # the members' code, in one value
    assert [r.median_us["fake_raises"] for r in upgraded.rounds] == pytest.approx(round_medians(run.rounds, "fake_raises"), rel=1e-6)
    assert upgraded.members == saved.members  # speedups and timings untouched


def test_a_group_record_whose_source_hash_does_not_match_its_members_is_refused(pair: Group, fake_env: Path) -> None:  # noqa: F811
    record = group_record(pair, "n8-float32", _group_run(1.05), {"fake_good": CHECK, "fake_raises": CHECK})
    data = dump(record) | {"source_hash": "0" * 64}
    with pytest.raises(EvidenceError, match="source_hash is not the hash of the members' source hashes"):
        record_from_json(data, "r.json")
