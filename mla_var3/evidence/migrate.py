"""Upgrade schema-1 records (before the typed model) to the current schema, keeping every measured value.

``python -m mla_var3.evidence migrate`` rewrites each schema-1 record in place:

- ``ceilings`` ``{copy_bytes_per_s, matmul_flops_per_s, *_method}`` become two :class:`Ceiling`\\ s,
  ``copy`` and ``matmul_bfloat16`` (schema 1 measured a bf16 matmul whatever the kernel's dtype);
- the stored ``roofline`` percentages go (they are computed from timing and ceilings when
  read); its ``flops`` and ``bytes`` move to the top level (compile records: from the plan);
- the annotation's pre-rendered timeline SVG becomes its spans (read back exactly: drawing
  them again gives the same picture) and the trace path on the measuring machine goes, as does
  the compile cache path; tool commands keep file names only;
- ``harness_hash`` stays unknown (``None``): such run records show as stale until re-verified.

Schema-2 group records become schema 3 (:func:`upgrade_group`): each round keeps each member's
median launch time in place of every launch's time (what the paired speedup was computed from;
the speedups, timings and clock samples stay as they are, so such a record stays fresh).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mla_var3.evidence.model import (
    GROUP_SCHEMA_VERSION,
    SCHEMA_VERSION,
    GroupRecord,
    GroupRound,
    MemberResult,
    RoundSummary,
    members_source_hash,
    record_from_json,
    scrub_paths,
)
from mla_var3.evidence.provenance import section_from_profile
from mla_var3.evidence.store import record_files, save
from mla_var3.evidence.typed import EvidenceError, dump, parse
from mla_var3.profile.roofline import COMPUTE, MEMORY


def upgrade(old: dict[str, Any], where: str) -> dict[str, Any]:
    """The current-schema form of a schema-1 record."""
    if old.get("schema_version") != 1:
        raise EvidenceError(f"{where}: schema_version {old.get('schema_version')!r} is not 1; nothing to migrate")
    new = {k: v for k, v in old.items() if k not in ("roofline", "ceilings", "ncu", "sanitizer", "annotation", "correctness")}
    new["schema_version"] = SCHEMA_VERSION
    new["harness_hash"] = None
    new["compile"] = {k: v for k, v in old["compile"].items() if k != "entry"}
    roof = old.get("roofline") or {}
    if "flops" in roof:
        new["flops"], new["bytes"] = roof["flops"], roof["bytes"]
    else:
        from mla_var3.kernel.registry import get_plan

        new["flops"], new["bytes"] = get_plan(old["kernel"])(old["dtype"])._algorithmic_flops_bytes(old["shape"])
    if old["mode"] == "compile":
        new["device"] = {"compiled_on": old["device"].get("compiled_on")}
    if old.get("correctness") is not None:
        new["correctness"] = {"outputs": old["correctness"]["outputs"]}
    ceilings = old.get("ceilings")
    if ceilings:
        new["ceilings"] = [
            {"name": "copy", "kind": MEMORY, "value": ceilings["copy_bytes_per_s"], "method": ceilings["copy_method"]},
            {"name": "matmul_bfloat16", "kind": COMPUTE, "value": ceilings["matmul_flops_per_s"], "method": ceilings["matmul_method"]},
        ]
    for section in ("ncu", "sanitizer", "annotation"):
        if old.get(section):
            payload = {k: v for k, v in old[section].items() if k != "git_sha"}
            new[section] = dump(section_from_profile(section, payload, old[section].get("git_sha") or old["git_sha"]))
    return scrub_paths(new)


def upgrade_group(old: dict[str, Any], where: str) -> dict[str, Any]:
    """The schema-3 form of a schema-2 group record: per-round medians instead of per-launch times."""
    if old.get("schema_version") != 2 or "group" not in old:
        raise EvidenceError(f"{where}: not a schema-2 group record; nothing to migrate")
    rounds = [dump(RoundSummary.of(parse(GroupRound, r, f"{where} rounds[{i}]"))) for i, r in enumerate(old["rounds"])]
    members = [parse(MemberResult, m, f"{where} members[{i}]") for i, m in enumerate(old["members"])]
    return {**old, "schema_version": GROUP_SCHEMA_VERSION, "rounds": rounds, "source_hash": members_source_hash(members)}


def migrate(base: Path | None = None) -> list[Path]:
    """Upgrade every schema-1 record and schema-2 group record under the evidence folder; returns
    the files rewritten."""
    done = []
    for path in record_files(base):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema_version") == 1:
            record = record_from_json(upgrade(data, str(path)), str(path))
            done.append(save(record, base))
        elif data.get("schema_version") == 2 and "group" in data:
            done.append(save(parse(GroupRecord, upgrade_group(data, str(path)), str(path)), base))
    return done
