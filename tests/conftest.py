"""Shared test fixtures; GPU tests skip with the reason when no CUDA GPU is present."""

from __future__ import annotations

import os
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


@pytest.fixture
def tmp_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty compile cache for one test."""
    monkeypatch.setenv("MLA_VAR3_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"
