"""nox sessions: tests, lint, docs, serve, new-pattern, verify-snippets, publish, cutlass, and the
peers' builds flashmla and cutile.

Environments are reusable (``nox -R`` skips re-installing). torch is pinned to the CPU build
that the package index here serves as a local file; the GPU machine brings its own torch.
``new-pattern`` installs only the page model (the ``pages`` extra), no torch.

The CUTLASS pin (``third_party/cutlass.lock``) is read by ``mla_var3.project``, the one reader of
it; ``nox -s cutlass`` and ``publish`` check it out from ``$CUTLASS_GIT_DIR`` (a local clone or
bare mirror) when set, else from the lock's repository URL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT))  # mla_var3.project is stdlib-only: nox's own Python can import it

from mla_var3.project import CUTLASS_GIT_DIR_ENV, DEFAULT_CUTLASS_DIR, read_pin  # noqa: E402

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "tests"]

TORCH_CPU = "torch==2.13.0"
# Two pytest-xdist workers, one per core of the CPU machine. tests/conftest.py's scheduler keeps each
# file's tests on one worker (its module-scoped fixtures -- a site build, compiled kernels -- run once),
# the slowest files first, except the registry's independent compiles, which spread; the compile cache
# the workers share hands a kernel compiled by one to the other.
XDIST = ("-n", "2", "--dist", "loadfile")
QUIET_ENV = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", "PYTHONUNBUFFERED": "1"}
# Site builds keep nvdisasm/cuobjdump outputs (keyed by tool binary, arguments and cubin bytes, so a kept
# output is what the tool prints again) under .nox/: a rebuild skips ~80 disassemblies.
SITE_ENV = {
    **QUIET_ENV,
    "MLA_VAR3_TOOL_CACHE": os.environ.get("MLA_VAR3_TOOL_CACHE", str(ROOT / ".nox" / "tool-outputs")),
}


def _install(session: nox.Session, extras: str) -> None:
    """Install the project (skipped by nox itself under ``-R``, which implies ``--no-install``)."""
    session.install(TORCH_CPU)
    session.install("-e", f".[{extras}]")


def _ensure_chromium(session: nox.Session) -> None:
    """Debian's chromium for the browser test (never a downloaded browser); skipped if present or not root."""
    if shutil.which("chromium") or os.geteuid() != 0 or not shutil.which("apt-get"):
        return
    session.run("apt-get", "update", "-qq", external=True)
    session.run("apt-get", "install", "-y", "-qq", "chromium", external=True, env={"DEBIAN_FRONTEND": "noninteractive"})


@nox.session
def tests(session: nox.Session) -> None:
    """The CPU test suite (GPU tests skip, saying why), the browser test included, on two workers
    unless the arguments say otherwise (``nox -s tests -- -n 0 tests/test_cli.py``). Compiled kernels
    and tool outputs are kept between runs in ``.pytest_cache/`` (tests/conftest.py's ``KEPT``);
    ``nox -s tests -- --cache-clear`` starts cold."""
    _install(session, "docs,dev,analysis,tvm")
    _ensure_chromium(session)
    session.run("pytest", *XDIST, *session.posargs, env=QUIET_ENV)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, and the page schema of every page under docs/."""
    _install(session, "docs,dev,analysis")
    session.run("ruff", "check", ".")
    session.run("python", "-m", "mla_var3.knowledge", "lint", "docs", env=QUIET_ENV)


@nox.session
def docs(session: nox.Session) -> None:
    """Strict site build into site/ (stale evidence is marked, not fatal)."""
    _install(session, "docs,dev,analysis")
    session.run("mkdocs", "build", "--strict", *session.posargs, env=SITE_ENV)


@nox.session
def serve(session: nox.Session) -> None:
    """Live preview on http://127.0.0.1:8000."""
    _install(session, "docs,dev,analysis")
    session.run("mkdocs", "serve", "-a", "127.0.0.1:8000", *session.posargs, env=SITE_ENV)


@nox.session(name="new-pattern")
def new_pattern(session: nox.Session) -> None:
    """Scaffold a page: nox -s new-pattern -- <id> --kind optimization --scope cute-dsl.

    A light environment: only the page model's dependencies (the ``pages`` extra), run from the source
    tree (``python -m`` puts the repository root on the path), so no torch and no CuTe DSL.
    """
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    session.install(*extras["pages"])
    session.run("python", "-m", "mla_var3.knowledge", "new", *session.posargs, env=QUIET_ENV)


@nox.session(name="verify-snippets")
def verify_snippets(session: nox.Session) -> None:
    """Re-verify stale kernels and snippets that pages reference (GPU run, or compile-only)."""
    _install(session, "docs,dev,analysis")
    session.run("python", "-m", "mla_var3.evidence", "verify", *session.posargs, env=QUIET_ENV)


@nox.session
def publish(session: nox.Session) -> None:
    """Strict build plus the freshness gate: fails on missing, failing or stale evidence.

    Imported plans hash their upstream example into the source hash, so the pinned CUTLASS
    checkout must be there (as for `nox -s cutlass`).
    """
    _install(session, "docs,dev,analysis")
    _checkout_cutlass(session)
    session.run("python", "-m", "mla_var3.evidence", "gate", env=QUIET_ENV)
    # Claims the evidence cannot back (missing, stale, cross-run) are errors here, warnings in `docs`.
    session.run("mkdocs", "build", "--strict", env={**SITE_ENV, "KNOWLEDGE_CLAIMS": "error"})


@nox.session(python=False)
def cutlass(session: nox.Session) -> None:
    """Check out third_party/cutlass at the commit pinned in third_party/cutlass.lock.

    Source: $CUTLASS_GIT_DIR (a local clone or bare mirror) if set, else the upstream URL.
    Only the CuTe DSL examples and docs are checked out (sparse).
    """
    _checkout_cutlass(session)


def _checkout_cutlass(session: nox.Session) -> None:
    pin = read_pin(ROOT)
    commit = pin.commit
    url = os.environ.get(CUTLASS_GIT_DIR_ENV) or pin.repository
    dest = ROOT / DEFAULT_CUTLASS_DIR
    if dest.exists():
        head = subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        if head == commit:
            session.log(f"third_party/cutlass is at {commit[:12]}")
            return
        shutil.rmtree(dest)
    session.run("git", "clone", "--quiet", "--no-checkout", "--filter=blob:none", url, str(dest), external=True)
    session.run("git", "-C", str(dest), "sparse-checkout", "set", "examples/python", "media/docs", "python/CuTeDSL", external=True)
    session.run("git", "-C", str(dest), "checkout", "--quiet", commit, external=True)


@nox.session(python=False)
def flashmla(session: nox.Session) -> None:
    """Build FlashMLA's SM90 decode library (``third_party/flashmla/``) from pinned sources, offline.

    ``$FLASHMLA_GIT_DIR`` (a clone or bare mirror of deepseek-ai/FlashMLA holding the pinned commit)
    is required here; ``$CUTLASS_GIT_DIR`` (CUTLASS at FlashMLA's submodule commit) and ``$NVCC`` or
    ``$CUDA_HOME`` are passed on (see ``mla_var3.kernel.external.flashmla.build``). Any arguments go
    to the build (``-- --force``, ``-- --jobs 8``).
    """
    git_dir = os.environ.get("FLASHMLA_GIT_DIR", "")
    if not git_dir or not Path(git_dir).expanduser().exists():
        what = f"FLASHMLA_GIT_DIR={git_dir} does not exist" if git_dir else "FLASHMLA_GIT_DIR is not set"
        session.error(f"{what}: point it at a clone or bare mirror of https://github.com/deepseek-ai/FlashMLA "
                      "that holds the commit pinned in mla_var3/kernel/external/flashmla/build.py")
    passed = {k: os.environ[k] for k in ("FLASHMLA_GIT_DIR", "CUTLASS_GIT_DIR", "NVCC", "CUDA_HOME") if k in os.environ}
    session.run(sys.executable, "-m", "mla_var3.kernel.external.flashmla.build", *session.posargs,
                env={**QUIET_ENV, **passed}, external=True)


# The cuTile plans exported ahead of time: ours and TileGym's, at every check shape and config.
CUTILE_PLANS = ("mla_var3.kernel.cutile.mla.decode.split_kv", "mla_var3.kernel.external.mla.tilegym.decode")


@nox.session
def cutile(session: nox.Session) -> None:
    """Export the cuTile cubins into build/cutile (no GPU): TileGym's pinned source from
    ``$TILEGYM_GIT_DIR``, then every check shape and config of our cuTile MLA decode and TileGym's;
    then the cp312 ``cuda-tile`` wheel the GPU machine launches them with (build/cutile/wheels,
    which ``tools/device/carry.sh mla`` carries)."""
    _install(session, "tile")
    session.run("python", "-m", "mla_var3.kernel.external.tilegym.source", env=QUIET_ENV)
    session.run("python", "-m", "mla_var3.kernel.cutile.aot", *CUTILE_PLANS, "--check-shapes", "--all-configs", env=QUIET_ENV)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["tile"][0]
    wheel = version.replace("[tileiras]", "")  # the GPU side launches cubins: the runtime only
    session.run("python", "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
                "--implementation", "cp", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
                "--platform", "manylinux2014_x86_64", "--dest", str(ROOT / "build" / "cutile" / "wheels"), wheel)
