"""store.load keeps parsed records by file text: the same file read twice is parsed once (a site build reads
each group record once per directive that shows it), and a rewritten file is parsed again, never served
from the old text."""

from __future__ import annotations

import shutil
from pathlib import Path

from mla_var3.evidence import store
from mla_var3.project import REPO_ROOT

RECORD = Path("groups/mla_decode_schedule_latency/b1-s1-t8192-h128-page64-varlen0-bfloat16/nvidia-h200.json")


def test_the_same_text_is_parsed_once_and_a_rewrite_is_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "evidence" / RECORD
    path.parent.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "evidence" / RECORD, path)
    first = store.load(path)
    assert store.load(path) is first
    path.write_text(path.read_text() + "\n")  # new text, same record
    again = store.load(path)
    assert again is not first and again == first
