"""Shared test fixtures; GPU tests skip with the reason when no CUDA GPU is present.

The suite runs on two workers (``nox -s tests``: pytest-xdist, ``--dist loadfile``): each file's
tests stay together on one worker (:data:`SPREAD` names the files whose tests are spread; the scheduler
is :func:`pytest_xdist_make_scheduler`'s), and the compile cache is one folder shared by both workers and
kept between runs (:data:`KEPT`), so a kernel one test compiled is read back by every other test, and by the
next run while its sources are unchanged, that asks for the same binary.
"""

from __future__ import annotations

import atexit
import getpass
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
# Bytecode as Python keeps it by default, even where the environment turns it off (PYTHONDONTWRITEBYTECODE,
# as on the CPU machine): otherwise every process of a run -- each worker, each site build, each CLI
# child -- compiles the repository's modules from source and pytest rewrites every test file again
# (~2.5 s of each worker's start). The .pyc files go to the __pycache__ folders git ignores, and Python
# checks each against its source's mtime and size before using it.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    sys.dont_write_bytecode = False


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


_PRIVATE_TMP = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """A temporary folder of this process's own (each xdist worker, each concurrent session): the
    CuTe DSL writes a compile's cubin to ``<dump dir>/<host function name + argument types>.<arch>.cubin``
    and reads it back, and the backends dump under the temporary folder, so two processes compiling
    different kernels whose host functions share a name could read each other's binary."""
    # Beside each other in the machine's temporary folder (never nested: a path under it must stay
    # short, chromium's socket path included); the DSL's own file cache, keyed by content, stays
    # where the DSL keeps it by default.
    shared = os.environ.setdefault("MLA_VAR3_SHARED_TMPDIR", tempfile.gettempdir())
    os.environ.setdefault("CUTE_DSL_CACHE_DIR", os.path.join(shared, getpass.getuser(), "cutlass_python_cache"))
    folder = tempfile.mkdtemp(prefix=f"mv3-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-", dir=shared)
    config.stash[_PRIVATE_TMP] = folder
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller, or a run without workers
        config.pluginmanager.register(FileSeconds(config), "mla_var3-file-seconds")
    else:
        atexit.register(_end_worker)
    os.environ["TMPDIR"] = folder  # inherited by subprocesses (site builds, verify's children)
    tempfile.tempdir = folder


def _end_worker() -> None:
    """An xdist worker's last exit handler (registered before the tests run, so it runs after theirs):
    leave without the interpreter's teardown. The worker has sent its results and removed its folders
    by then; tearing down torch, the DSL's MLIR contexts and every compiled module added ~2.5 s to the
    end of a full run, which the controller waited for."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_PRIVATE_TMP, None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


# Files whose tests are independent compiles, spread over both workers; every other file's tests run
# on one worker together, so its module-scoped fixtures (a site build, compiled kernels) run once.
SPREAD = frozenset({"test_registry_compile.py"})
# Files whose tests read the one build of the repository's site (:func:`real_site`): one work unit, so
# the site is built once per run, not once per worker.
REAL_SITE = frozenset({"test_browser.py", "test_get_started_page.py"})
# Run first even before any run has timed it: the browser test builds the whole site (~40 s on one core).
HEAVY = ("test_browser.py",)
# Each test file's seconds (setup, call, teardown) in the last run that ran it, in pytest's cache.
FILE_SECONDS = "mla_var3/file_seconds"


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent without xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with the :data:`SPREAD` files' tests as work units of their own and the
    :data:`REAL_SITE` files as one unit, handed out in collection order (longest first:
    :func:`pytest_collection_modifyitems`).

    A scheduler, not ``xdist_group`` marks: pytest-xdist 3.8 renames a marked test's ``_nodeid``,
    which pytest 9 no longer reads, so under ``--dist loadgroup`` every test was its own unit and a
    file's module fixtures ran on both workers.
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            name = Path(path).name
            return nodeid if name in SPREAD else "real-site" if name in REAL_SITE else path

    config.option.loadscopereorder = False  # xdist would order the files by their number of tests
    return FileScheduling(config, log)


def _file_order(config: pytest.Config) -> Callable[[pytest.Item], tuple[int, float]]:
    """Sort key of a test file: :data:`HEAVY` first, then files no run has timed yet, then the others,
    slowest first (so the last file to start is a short one), the :data:`SPREAD` files' tests last."""
    cache = getattr(config, "cache", None)  # absent under -p no:cacheprovider
    seconds: dict[str, float] = cache.get(FILE_SECONDS, {}) if cache is not None else {}

    def key(item: pytest.Item) -> tuple[int, float]:
        name = item.path.name
        if name in SPREAD:
            return (3, 0.0)
        if name in HEAVY:
            return (0, 0.0)
        return (1, 0.0) if name not in seconds else (2, -seconds[name])

    return key


@pytest.hookimpl(trylast=True)  # after pytest groups the tests by their fixtures
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_file_order(config))  # stable: each file's tests keep their order
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none on this machine; run on the H200 via the device tool)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


class FileSeconds:
    """Adds up each test file's seconds (on the xdist controller, from every worker's reports) and keeps
    them in pytest's cache for the next run's order; files this run did not run keep theirs."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        name = Path(report.nodeid.split("::", 1)[0]).name
        self.seconds[name] = self.seconds.get(name, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        cache = getattr(self.config, "cache", None)
        if self.seconds and cache is not None:
            cache.set(FILE_SECONDS, cache.get(FILE_SECONDS, {}) | self.seconds)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.cutlass`` tests need a CUTLASS checkout (``$CUTLASS_DIR`` or ``third_party/cutlass``)."""
    if item.get_closest_marker("cutlass") is None:
        return
    from mla_var3.project import EXAMPLES_ROOT, cutlass_dir

    if not (cutlass_dir() / EXAMPLES_ROOT).is_dir():
        pytest.skip("needs third_party/cutlass (nox -s cutlass)")


# Kept between runs in pytest's cache folder (``.pytest_cache/d/``), shared by the xdist workers and the
# site builds they start (entries are written atomically):
# - the compile cache (:mod:`mla_var3.kernel.compile_cache`), keyed by the plan's source fingerprint (its
#   import closure), the DSL and CUDA versions, the arch, the config, the dtype and the static shape: an
#   edit to a kernel or a new DSL is a new key, so a run compiles what changed since the last one and
#   reads back what did not. Direct ``cute.compile`` calls (the snippets, the compile cache's own tests,
#   which take ``tmp_cache``) compile every run.
# - cuobjdump/nvdisasm outputs (:mod:`mla_var3.analysis.tools`), keyed by the tool binary, its arguments
#   and the cubin's bytes.
# ``pytest --cache-clear`` starts cold, compiling every kernel afresh (a fresh clone, so CI, always does);
# a folder past KEPT_BYTES is emptied when a run starts, so entries of old sources do not pile up.
KEPT = {"MLA_VAR3_CACHE_DIR": "mla_var3-compile-cache", "MLA_VAR3_TOOL_CACHE": "mla_var3-tool-outputs"}
KEPT_BYTES = 1 << 30


def _kept(config: pytest.Config, env: str) -> Path | None:
    """The folder :data:`KEPT` names for ``env``; None without pytest's cache (``-p no:cacheprovider``)."""
    cache = getattr(config, "cache", None)
    return cache.mkdir(KEPT[env]) if cache is not None else None


def pytest_sessionstart(session: pytest.Session) -> None:
    """Empty a kept folder past :data:`KEPT_BYTES` (once: on the controller, before any xdist worker starts)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for env in KEPT:
        folder = _kept(session.config, env)
        if folder is not None and sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) > KEPT_BYTES:
            shutil.rmtree(folder)
            folder.mkdir()


@pytest.fixture(scope="session", autouse=True)
def session_compile_cache(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[Path]:
    """The compile cache and the tool outputs of :data:`KEPT` (never the user's ~/.cache): tests that
    inspect a binary share its entry, across xdist workers and runs; tests of the cache itself take
    ``tmp_cache`` or ``fresh_compile_cache``. Without pytest's cache, folders of this run's own."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folders = {env: _kept(pytestconfig, env) or shared / name for env, name in KEPT.items()}
    with pytest.MonkeyPatch.context() as mp:
        for env, folder in folders.items():
            folder.mkdir(exist_ok=True)
            mp.setenv(env, str(folder))
        yield folders["MLA_VAR3_CACHE_DIR"]


@pytest.fixture(scope="session")
def real_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's site, built once (``mkdocs build --strict`` in a process of its own, cold, as
    ``nox -s docs`` runs it) for the tests that read the real build (:data:`REAL_SITE`)."""
    out = tmp_path_factory.mktemp("real-site") / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


@contextmanager
def restoring_imports() -> Iterator[None]:
    """Loading a CUTLASS example puts its folders on ``sys.path`` and its siblings (``helpers``,
    ...) in ``sys.modules``; take both out again afterwards, so that tests loading another
    checkout's example tree find their own siblings."""
    from mla_var3.project import EXAMPLES_ROOT, cutlass_dir

    saved, before = list(sys.path), set(sys.modules)
    try:
        yield
    finally:
        sys.path[:] = saved
        examples = str(cutlass_dir().resolve() / EXAMPLES_ROOT)
        for name in set(sys.modules) - before:
            if (getattr(sys.modules[name], "__file__", None) or "").startswith(examples):
                del sys.modules[name]


@pytest.fixture
def restored_imports() -> Iterator[None]:
    """:func:`restoring_imports` around one test."""
    with restoring_imports():
        yield


@pytest.fixture(scope="module")
def module_restored_imports() -> Iterator[None]:
    """:func:`restoring_imports` around a module whose compiled examples its tests share."""
    with restoring_imports():
        yield


@pytest.fixture(scope="session")
def warm_python() -> Iterator[Any]:
    """``python -m ...`` processes forked from one warm interpreter (:mod:`warm_python`, beside this file)."""
    from warm_python import WarmPython

    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    server = WarmPython(env)
    yield server
    server.close()


@pytest.fixture
def fixture_root(tmp_path: Path) -> Path:
    """A copy of the fixture site (tests/fixtures/site) with the CUTLASS pin, to edit pages in."""
    root = tmp_path / "root"
    shutil.copytree(ROOT / "tests" / "fixtures" / "site", root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "third_party").mkdir()
    shutil.copy(ROOT / "third_party" / "cutlass.lock", root / "third_party" / "cutlass.lock")
    return root


@pytest.fixture
def cli_error(capsys: pytest.CaptureFixture[str]) -> Callable[[list[str]], str]:
    """Run ``python -m mla_var3.kernel ARGS`` in this process (``main`` returns the exit code the
    process would); it must exit 2 with exactly one line on stderr and no output: that line."""
    from mla_var3.kernel.cli import main

    def run(args: list[str]) -> str:
        try:
            code = main(args)
        except SystemExit as exc:  # argparse exits for flags it cannot parse
            code = exc.code
        out, err = capsys.readouterr()
        assert code == 2, err
        assert out == "" and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err
        return err.strip()

    return run


@pytest.fixture(scope="session")
def cute_type() -> Callable[[Any], str]:
    """``'dtype shape:stride'`` of a fake or a real CuTe tensor, the default divisibility dropped: a
    launch's tensor and the fake one a plan compiled against must print the same."""

    def norm(s: str) -> str:
        return s.replace("{div=1}", "").replace(" div=1}", "}").replace(" ", "").replace(",)", ")")

    def describe(t: Any) -> str:
        text = str(t)
        if text.startswith("FakeTensor<"):
            dtype, shape, stride = re.fullmatch(r"FakeTensor<(\w+), (\(.*?\)), (\(.*\))>", text).groups()  # type: ignore[union-attr]
        else:
            dtype = str(t.element_type)
            shape, stride = re.search(r" o (\(.*\)):(\(.*\))>$", text).groups()  # type: ignore[union-attr]
        return f"{dtype} {norm(shape)}:{norm(stride)}"

    return describe


@pytest.fixture
def tmp_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty compile cache for one test."""
    monkeypatch.setenv("MLA_VAR3_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def fresh_compile_cache(tmp_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty disk cache and an empty in-memory cache, before and after the test; run in tmp_path
    so a direct ``cute.compile(..., "--keep-cubin")`` (no ``--dump-dir``) leaves no cubin behind."""
    from mla_var3.kernel.compile_cache import clear_memory_cache

    monkeypatch.chdir(tmp_path)
    clear_memory_cache()
    yield tmp_cache
    clear_memory_cache()


@pytest.fixture(scope="session")
def hopper_ws_cubin() -> Callable[[int, str], bytes]:
    """``hopper_gemm_ws``'s cubin for sm_90a by (config index, dtype), from the session's compile
    cache (one binary serves every shape: M, N, K are dynamic)."""
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import HopperGemmWSPlan

    @cache
    def build(config_index: int, dtype: str) -> bytes:
        plan = HopperGemmWSPlan(dtype)
        config = plan._autotune_configs()[config_index]
        result = compile_cached(plan, config, {"m": 1000, "n": 1048, "k": 520}, "sm_90a", need_function=False)
        assert result.compiled.cubin is not None
        return result.compiled.cubin

    return build


@pytest.fixture(scope="session")
def hopper_ws_default_cubin(hopper_ws_cubin: Callable[[int, str], bytes]) -> bytes:
    return hopper_ws_cubin(0, "bfloat16")
