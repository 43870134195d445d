"""The warm interpreter the site-build tests fork their ``python -m`` runs from (``tests/warm_python.py``)
answers as a cold ``python -m`` would: the run's own working directory, environment, argv and
``sys.path[0]``, its exit status (from ``sys.exit``, an uncaught exception, a signal), its output, and
a timeout that kills it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from warm_python import WarmPython

PROBE = textwrap.dedent("""\
    import json, os, sys
    print(json.dumps({"cwd": os.getcwd(), "argv": sys.argv[1:], "path0": sys.path[0],
                      "env": os.environ.get("WARM_PROBE"), "preloaded": "mkdocs.commands.build" in sys.modules}))
    print("to stderr", file=sys.stderr)
    mode = sys.argv[1]
    if mode == "exit":
        sys.exit(int(sys.argv[2]))
    if mode == "raise":
        raise ValueError("deliberate")
    if mode == "kill":
        os.kill(os.getpid(), 9)
    if mode == "hang":
        import time
        time.sleep(60)
""")


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    (tmp_path / "warm_probe.py").write_text(PROBE)
    return tmp_path


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


@pytest.mark.parametrize("python", ["warm", "cold"])
def test_a_run_sees_its_own_cwd_argv_environment_and_path(probe: Path, warm_python: WarmPython, python: str) -> None:
    """The same answers from the warm interpreter as from a cold ``python -m`` (the cold one is the reference)."""
    import json

    args = ["warm_probe", "exit", "0"]
    if python == "warm":
        result = warm_python.run(args, cwd=probe, env=_env(WARM_PROBE="here"), timeout=60)
    else:
        result = subprocess.run([sys.executable, "-m", *args], cwd=probe, env=_env(WARM_PROBE="here"),
                                capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    seen = json.loads(result.stdout)
    assert result.returncode == 0 and result.stderr == "to stderr\n"
    assert (seen["cwd"], seen["argv"], seen["path0"], seen["env"]) == (str(probe), ["exit", "0"], str(probe), "here")
    assert seen["preloaded"] == (python == "warm")


@pytest.mark.parametrize(("args", "code", "in_stderr"), [
    (["exit", "3"], 3, "to stderr"),
    (["raise"], 1, "ValueError: deliberate"),
    (["kill"], -9, "to stderr"),
])  # fmt: skip
def test_the_exit_status_and_the_error_come_back(
    probe: Path, warm_python: WarmPython, args: list[str], code: int, in_stderr: str
) -> None:
    result = warm_python.run(["warm_probe", *args], cwd=probe, env=_env(), timeout=60)
    assert result.returncode == code and in_stderr in result.stderr


def test_a_run_past_its_timeout_is_killed(probe: Path, warm_python: WarmPython) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        warm_python.run(["warm_probe", "hang"], cwd=probe, env=_env(), timeout=0.5)
    assert warm_python.run(["warm_probe", "exit", "0"], cwd=probe, env=_env(), timeout=60).returncode == 0  # still serving
