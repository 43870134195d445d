"""The noxfile's peer sessions refuse a missing source in one line, before building anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("git_dir", [None, "/nonexistent/flashmla.git"], ids=["unset", "no-such-folder"])
def test_flashmla_without_its_git_dir_is_one_line(git_dir: str | None, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FLASHMLA_GIT_DIR"}
    if git_dir:
        env["FLASHMLA_GIT_DIR"] = git_dir
    proc = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(REPO / "noxfile.py"), "--envdir", str(tmp_path), "-s", "flashmla"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode != 0, output
    problem = [line for line in output if "FLASHMLA_GIT_DIR" in line]
    assert len(problem) == 1, output
    assert ("does not exist" if git_dir else "is not set") in problem[0]
    assert "clone or bare mirror of https://github.com/deepseek-ai/FlashMLA" in problem[0]
    assert "Traceback" not in proc.stderr
    assert "-m mla_var3.kernel.external.flashmla.build" not in proc.stdout + proc.stderr  # refused before running it
