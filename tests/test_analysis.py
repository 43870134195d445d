"""GPU-free analysis: resource and SASS parsers on captured tool output, and real cubins per arch."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from mla_var3.analysis import (
    AnalysisError,
    CubinAnalysis,
    ToolNotFoundError,
    analyze_cubin,
    class_description,
    find_tool,
    histogram_of,
    instruction_histogram,
    opcode_histogram,
    parse_resource_usage,
    parse_sass,
    pattern_classes,
    resource_usage,
)
from mla_var3.analysis.sass import sass_target, vector_width_bits

FIXTURES = Path(__file__).parent / "fixtures" / "analysis"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# --- parsers on captured text ----------------------------------------------------------
def test_resource_usage_parser_reads_every_kernel() -> None:
    kernels = parse_resource_usage(fixture("resource_usage_two_kernels_sm_90a.txt"))
    assert [
        (k.kernel.split("_")[2], k.registers, k.static_smem_bytes, k.local_bytes, k.stack_bytes)
        for k in kernels
    ] == [
        ("shuffle", 12, 0, 0, 0),
        ("scale", 10, 0, 0, 0),
    ]
    assert kernels[0].constant_bytes == 544


def test_resource_usage_parser_tcgen05_kernel() -> None:
    (kernel,) = parse_resource_usage(fixture("resource_usage_tcgen05_sm_100a.txt"))
    assert (kernel.registers, kernel.static_smem_bytes, kernel.local_bytes, kernel.stack_bytes) == (
        70,
        1024,
        0,
        0,
    )
    assert kernel.to_dict()["registers"] == 70


def test_resource_usage_parser_ignores_text_without_kernels() -> None:
    assert parse_resource_usage("Resource usage:\n Common:\n  GLOBAL:0\n") == []


def test_sass_parser_splits_kernels_and_keeps_modifiers() -> None:
    kernels = parse_sass(fixture("sass_two_kernels_sm_90a.txt"))
    assert sorted(name.split("_")[2] for name in kernels) == ["scale", "shuffle"]
    shuffle = next(m for n, m in kernels.items() if "shuffle" in n)
    assert shuffle[:3] == ["LDC", "S2R", "LDC.64"]
    assert "SHFL.BFLY" in shuffle and "LDG.E" in shuffle and "STG.E" in shuffle
    assert all(
        " " not in m and not m.endswith(";") and not m.startswith("@") for ms in kernels.values() for m in ms
    )
    assert sass_target(fixture("sass_two_kernels_sm_90a.txt")) == "sm_90a"


def test_sass_parser_drops_predicates() -> None:
    text = fixture("sass_excerpt_warp_specialized_sm_90a.txt")
    assert "@P0 BRA" in text and "@!P" in text  # the fixture has predicated instructions
    hist = histogram_of(text)
    assert not any(m.startswith("@") for m in hist)
    predicated_bras = sum(1 for line in text.splitlines() if "*/" in line and " BRA " in line)
    assert hist["BRA"] == predicated_bras
    classes = pattern_classes(hist)
    for name in ("tma_load", "cluster_barrier", "setmaxreg", "mbarrier", "elect"):
        assert classes.get(name, 0) > 0, name


def test_pattern_classes_group_and_order() -> None:
    hist = {
        "HGMMA.64x128x16.F32": 24,
        "QGMMA.64x128x32.F32.E4M3.E4M3": 2,
        "UTCHMMA": 8,
        "UTCQMMA": 1,
        "UTCBAR": 3,
        "LDTM.x64": 1,
        "UTMALDG.2D.MULTICAST": 4,
        "UTMASTG.2D": 2,
        "LDGSTS.E.BYPASS.LTC128B.128": 32,
        "SYNCS.PHASECHK.TRANS64.TRYWAIT": 5,
        "BAR.SYNC.DEFER_BLOCKING": 3,
        "LDG.E.128": 4,
        "LDG.E": 1,
        "STG.E.ENL2.256": 2,
        "STS.U8": 1,
        "LDL.64": 2,
        "FFMA": 100,
    }
    classes = pattern_classes(hist)
    assert classes == {
        "wgmma": 26,
        "tcgen05_mma": 9,
        "tcgen05_commit": 3,
        "tmem_copy": 1,
        "tma_load": 4,
        "tma_store": 2,
        "cp_async": 32,
        "mbarrier": 5,
        "barrier": 3,
        "local_memory": 2,
        "ldg_32": 1,
        "ldg_128": 4,
        "stg_256": 2,
        "sts_8": 1,
    }
    assert "LDGSTS" not in {k.split("_")[0].upper() for k in classes if "_" in k}  # cp.async is no LDG
    assert all(class_description(name) for name in classes)


@pytest.mark.parametrize(
    ("mnemonic", "bits"),
    [
        ("LDG.E.128", 128),
        ("LDG.E", 32),
        ("STG.E.ENL2.256", 256),
        ("LDS.U8", 8),
        ("STS.S16", 16),
        ("LDG.E.64", 64),
    ],
)
def test_vector_width_bits(mnemonic: str, bits: int) -> None:
    assert vector_width_bits(mnemonic) == bits


def test_opcode_histogram_merges_modifiers() -> None:
    assert opcode_histogram({"UTMALDG.2D": 8, "UTMALDG.2D.MULTICAST": 8, "NOP": 3}) == {
        "UTMALDG": 16,
        "NOP": 3,
    }


# --- tools ------------------------------------------------------------------------------
def test_tools_are_found() -> None:
    assert find_tool("cuobjdump").is_file() and find_tool("nvdisasm").is_file()


def test_missing_tool_says_how_to_install() -> None:
    with pytest.raises(ToolNotFoundError, match=r"analysis extra"):
        find_tool("no-such-cuda-tool")


def test_empty_cubin_is_an_analysis_error() -> None:
    with pytest.raises(AnalysisError, match="empty"):
        resource_usage(b"")


# --- real cubins ------------------------------------------------------------------------
def _tiny_cubin(arch: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute

    spec = importlib.util.spec_from_file_location("tiny_kernels", FIXTURES / "tiny_kernels.py")
    assert spec is not None and spec.loader is not None
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    x = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (4096,), assumed_align=16)
    # --keep-cubin also writes a copy into a dump dir (the DSL's import-time CWD unless given).
    options = f"--gpu-arch {arch} --keep-cubin --dump-dir {tmp_path}"
    fn = cute.compile(tiny.scale_by_two, x, x, cuda.CUstream(0), options=options)
    return fn.artifacts.CUBIN


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "sm_100a"])
def test_real_cubin_histogram_and_resources(
    arch: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cubin = _tiny_cubin(arch, tmp_path, monkeypatch)
    hist = instruction_histogram(cubin, arch)
    assert hist["LDG.E"] == 1 and hist["STG.E"] == 1 and hist["EXIT"] >= 1
    (kernel,) = resource_usage(cubin)
    assert (
        kernel.kernel.startswith("kernel_cutlass_") and 0 < kernel.registers < 64 and kernel.local_bytes == 0
    )
    analysis = analyze_cubin(cubin, arch, dynamic_smem_bytes=0)
    assert analysis.sass.classes == {"ldg_32": 1, "stg_32": 1}
    assert sum(analysis.sass.kernels.values()) == analysis.sass.instructions == sum(hist.values())
    data = json.loads(json.dumps(analysis.to_dict()))
    assert CubinAnalysis.from_dict(data) == analysis
    other = "sm_100a" if arch != "sm_100a" else "sm_90a"
    with pytest.raises(AnalysisError, match=f"targets {arch}, not {other}"):
        instruction_histogram(cubin, other)


def test_tool_outputs_are_shared_through_the_tool_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mla_var3.analysis import tools

    runs: list[list[str]] = []

    def fake_run(exe: Path, tool: str, args: list[str], cubin: bytes, timeout_s: float) -> str:
        runs.append(args)
        return f"output of {args} for {len(cubin)} bytes"

    monkeypatch.setattr(tools, "_run", fake_run)
    monkeypatch.setattr(tools, "find_tool", lambda name: Path(sys.executable))  # any existing file
    monkeypatch.setattr(tools, "_memo", type(tools._memo)())
    monkeypatch.setenv(tools.TOOL_CACHE_ENV, str(tmp_path / "tools"))
    first = tools.run_on_cubin("nvdisasm", ["-c"], b"cubin")
    tools._memo.clear()  # as another process would start: only the folder is shared
    assert tools.run_on_cubin("nvdisasm", ["-c"], b"cubin") == first and runs == [["-c"]]
    assert tools.run_on_cubin("nvdisasm", ["-c"], b"other cubin") != first and len(runs) == 2
    assert len(list((tmp_path / "tools").iterdir())) == 2  # no temporaries left
    monkeypatch.delenv(tools.TOOL_CACHE_ENV)
    tools._memo.clear()
    tools.run_on_cubin("nvdisasm", ["-c"], b"cubin")
    assert len(runs) == 3  # without the folder, a new process runs the tool again
