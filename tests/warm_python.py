"""``python -m MODULE ARGS`` for the tests, forked from a warm interpreter instead of started cold.

A site build (``python -m mkdocs build``) or a knowledge CLI run spends more time importing (mkdocs,
its plugins, ``mla_var3``, the CuTe DSL: about 1.2 s) than working on the small fixture site. The
server (this file run as a script) imports those libraries once, then forks one child per request;
the child is the process a cold start would be -- its own working directory, environment, argv,
``sys.path[0]`` (the working directory, as under ``-m``), stdin, stdout and stderr, ``__main__`` run
by :mod:`runpy` -- except that the libraries are already imported. Nothing is preloaded that a run
imports from its working directory (the fixture site's ``snippets`` and ``hooks``), and the server
never runs a request itself, so each child starts from the same clean state. The browser test's build
of the real site stays a cold ``subprocess.run``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import runpy
import selectors
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

# Imported before any fork: the heavy libraries every mkdocs build and knowledge CLI run of the repo imports.
PRELOAD = (
    "cutlass",
    "markdown",
    "pymdownx.superfences",
    "pymdownx.snippets",
    "markdown_exec",
    "material",
    "mkdocs.commands.build",
    "mkdocs.config.defaults",
    "mla_var3.evidence.render",
    "mla_var3.knowledge.build",
    "mla_var3.knowledge.plugin",
)


class WarmPython:
    """A server process; :meth:`run` answers like ``subprocess.run([python, "-m", ...], capture_output=True)``."""

    def __init__(self, env: dict[str, str]) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
        )
        assert self._proc.stdout is not None
        ready = self._proc.stdout.readline()
        assert ready.strip() == "ready", f"the warm python did not start: {ready!r}"

    def run(self, argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        """``python -m argv[0] argv[1:]`` in ``cwd`` with exactly ``env``; its exit status and output."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with tempfile.TemporaryDirectory(prefix="warm-python-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            request = {"argv": argv, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err)}
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            pid = int(self._proc.stdout.readline())
            with selectors.DefaultSelector() as sel:
                sel.register(self._proc.stdout, selectors.EVENT_READ)
                if not sel.select(timeout):
                    os.kill(pid, signal.SIGKILL)
                    self._proc.stdout.readline()
                    raise subprocess.TimeoutExpired(["-m", *argv], timeout)
            code = int(self._proc.stdout.readline())
            return subprocess.CompletedProcess(["-m", *argv], code, out.read_text(), err.read_text())

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


def _pythonpath(env: dict[str, str] | os._Environ[str]) -> list[str]:
    return [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]


_SERVER_ENV = dict(os.environ)


def _child(request: dict) -> int:
    """In the forked child: become ``python -m ...`` as the request describes; its exit status."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # chosen again from this run's $TMPDIR
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, fd)
        os.close(out)
    module, *args = request["argv"]
    sys.argv = [module, *args]
    # ``python -m``'s path: the working directory, then $PYTHONPATH, then the interpreter's own.
    own = [p for p in sys.path[1:] if p not in _pythonpath(_SERVER_ENV)]
    sys.path[:] = [os.getcwd(), *_pythonpath(os.environ), *own]
    for name in {m.split(".")[0] for m in PRELOAD}:  # a preloaded package the child would find elsewhere
        spec = importlib.machinery.PathFinder.find_spec(name, sys.path)
        if spec is not None and spec.origin != sys.modules[name].__file__:
            raise RuntimeError(f"{name} is preloaded from {sys.modules[name].__file__}, but this run finds {spec.origin}")
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # an uncaught exception: print it as the interpreter would
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _serve() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    assert "snippets" not in sys.modules, "the preload must leave the working directory's snippets to the child"
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(request)
            except BaseException:  # the run could not start: say why on its stderr
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        print(pid, flush=True)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


if __name__ == "__main__":
    _serve()
