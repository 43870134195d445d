"""Shared test fixtures; GPU tests skip with the reason when no CUDA GPU is present."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none on this machine; run on the H200 via the device tool)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.cutlass`` tests need a CUTLASS checkout (``$CUTLASS_DIR`` or ``third_party/cutlass``)."""
    if item.get_closest_marker("cutlass") is None:
        return
    from mla_var3.project import EXAMPLES_ROOT, cutlass_dir

    if not (cutlass_dir() / EXAMPLES_ROOT).is_dir():
        pytest.skip("needs third_party/cutlass (nox -s cutlass)")


@pytest.fixture(scope="session", autouse=True)
def session_compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One compile cache for the session (never the user's ~/.cache): tests that inspect a
    binary share its entry; tests of the cache itself take ``tmp_cache`` or ``fresh_compile_cache``."""
    folder = tmp_path_factory.mktemp("compile-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLA_VAR3_CACHE_DIR", str(folder))
        yield folder


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
