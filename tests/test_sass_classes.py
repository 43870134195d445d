"""The SASS classes that tell the prefetches, the CLC query and the grid dependency apart, stored
analyses that follow the class list (the mnemonics are those of real sm_100a and sm_90a cubins:
``tests/test_registry_compile.py`` finds each class in a compiled kernel), and tool runs answered
from memory for a cubin already read."""

from __future__ import annotations

from pathlib import Path

import pytest

from mla_var3.analysis import AnalysisError, CubinAnalysis, tools
from mla_var3.analysis.sass import class_description, pattern_classes

# As nvdisasm prints them: CUTLASS's dense_gemm_persistent_prefetch.py, our sm100_gemm_persistent_clc,
# and CUTLASS's PDL tutorial.
HISTOGRAM = {
    "UTMACCTL.PF": 3,
    "UTMAPF.L2.3D": 4,
    "UTMALDG.3D": 2,
    "UGETNEXTWORKID.BROADCAST": 1,
    "ACQBULK": 1,
    "PREEXIT": 1,
    "CCTL.IVALL": 1,
}


def test_descriptor_and_l2_prefetch_are_two_classes() -> None:
    classes = pattern_classes(HISTOGRAM)
    assert classes == {
        "tma_load": 2,
        "tma_descriptor_prefetch": 3,
        "tma_l2_prefetch": 4,
        "clc_query": 1,
        "grid_dependency": 2,
    }
    assert "tma_prefetch" not in classes  # the old class mixed a descriptor warm-up with data movement
    assert "no data moved" in class_description("tma_descriptor_prefetch")
    assert "L2" in class_description("tma_l2_prefetch") and "ACQBULK" in class_description("grid_dependency")


def test_a_stored_analysis_takes_the_current_classes() -> None:
    """A compile-cache entry written before a class existed reads back with it: classes come from the histogram."""
    stored = {
        "arch": "sm_100a",
        "dynamic_smem_bytes": 0,
        "resources": [],
        "sass_instructions": sum(HISTOGRAM.values()),
        "sass_classes": {"tma_load": 2, "tma_prefetch": 7},  # the old class list
        "sass_opcodes": {},
        "sass_histogram": HISTOGRAM,
        "sass_kernels": {"k": sum(HISTOGRAM.values())},
    }
    analysis = CubinAnalysis.from_dict(stored)
    assert analysis.sass.classes == pattern_classes(HISTOGRAM)
    assert CubinAnalysis.from_dict(analysis.to_dict()) == analysis


def test_a_tool_runs_once_per_cubin_and_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    fake = tmp_path / "fake-nvdisasm"
    fake.write_text(f"#!/bin/sh\necho run >> {runs}\n[ \"$1\" = --fail ] && exit 3\ncat \"$2\"\n")
    fake.chmod(0o755)
    monkeypatch.setattr(tools, "find_tool", lambda name: fake)
    monkeypatch.setattr(tools, "_memo", type(tools._memo)())
    assert tools.run_on_cubin("nvdisasm", ["-c"], b"cubin one") == "cubin one"
    assert tools.run_on_cubin("nvdisasm", ["-c"], b"cubin one") == "cubin one"  # from memory
    assert tools.run_on_cubin("nvdisasm", ["-c"], b"cubin two") == "cubin two"
    assert runs.read_text().count("run") == 2
    for _ in range(2):  # a failure is not kept: it runs again
        with pytest.raises(AnalysisError, match="failed \\(3\\)"):
            tools.run_on_cubin("nvdisasm", ["--fail"], b"cubin one")
    assert runs.read_text().count("run") == 4
