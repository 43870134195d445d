"""tools/device/run-queue.sh: the GPU-side queue. On a fake carry whose bootstrap only records the
command it is given: bad arguments exit 2 naming the fix; each item becomes the right command (a
verify glob reaches verify unexpanded, profile and pytest items their commands), the archive is
exported last, and items that no longer fit the budget are skipped while the export still runs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mla_var3.project import REPO_ROOT

QUEUE = REPO_ROOT / "tools" / "device" / "run-queue.sh"


@pytest.fixture
def carry(tmp_path: Path) -> Path:
    folder = tmp_path / "carry"
    folder.mkdir()
    (folder / "bootstrap.sh").write_text('#!/usr/bin/env bash\necho "$*" >> "$OUT/commands"\n')
    (tmp_path / "out").mkdir()
    return folder


def _run(carry: Path, *args: str, sha: str = "0123456789abcdef") -> subprocess.CompletedProcess[str]:
    env = os.environ | {"OUT": str(carry.parent / "out"), "MLA_VAR3_GIT_SHA": sha,
                        "MLA_VAR3_EVIDENCE_DIR": str(carry.parent / "evidence")}  # fmt: skip
    return subprocess.run(["bash", str(QUEUE), str(carry), *args], capture_output=True, text=True, env=env,
                          cwd=carry.parent, timeout=60)  # fmt: skip


def _commands(carry: Path) -> list[str]:
    return (carry.parent / "out" / "commands").read_text().splitlines()


def test_bad_arguments_exit_2_naming_the_fix(carry: Path) -> None:
    assert _run(carry).returncode == 2
    result = _run(carry, "soon", "x")
    assert result.returncode == 2 and "SECONDS must be a whole number" in result.stderr
    result = _run(carry.parent / "nowhere", "60", "x")
    assert result.returncode == 2 and "run tools/device/carry.sh" in result.stderr
    assert "set MLA_VAR3_GIT_SHA" in _run(carry, "60", "x", sha="").stderr


def test_items_become_their_commands_and_the_export_comes_last(carry: Path) -> None:
    (carry.parent / "groups").mkdir()  # a folder a shell would expand 'groups/*' into
    (carry.parent / "groups" / "decoy").write_text("")
    result = _run(carry, "120", "groups/gemm_bf16/*", "ncu:mla_decode_v5/b1-*", "pytest:tests/test_x.py")
    assert result.returncode == 0, result.stderr
    commands = _commands(carry)
    assert commands[0] == "true"  # the carry is unpacked once, first
    assert commands[1].startswith("python -m mla_var3.evidence verify --force")
    assert commands[1].endswith("--only groups/gemm_bf16/*")
    assert commands[2].startswith("python -m mla_var3.evidence profile --prof-type ncu")
    assert commands[2].endswith("--only mla_decode_v5/b1-*")
    assert "pytest -q -p no:cacheprovider -m gpu tests/test_x.py" in commands[3]
    assert commands[4].startswith("python -m mla_var3.evidence export") and commands[4].endswith(
        "evidence-0123456789ab.tar.gz"
    )


def test_items_past_the_budget_are_skipped_and_the_export_still_runs(carry: Path) -> None:
    result = _run(carry, "20", "groups/a/*", "groups/b/*")
    assert result.returncode == 0, result.stderr
    log = (carry.parent / "out" / "queue.log").read_text()
    assert log.count("skipped (no time left)") == 2
    assert [c.split()[3] for c in _commands(carry)[1:]] == ["export"]
