"""Imported CUTLASS examples: the loader (on a fake tree of our own), the CLI without CUTLASS, and
-- with a CUTLASS checkout -- CUTLASS's Hopper ``dense_gemm.py`` compiled for sm_90a as a plan."""

from __future__ import annotations

import importlib
import inspect
import runpy
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mla_var3 import project
from mla_var3.kernel import fingerprint, upstream
from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cute_python.gemm.cutlass_dense_gemm.imported.plan import (
    EXAMPLE,
    CutlassHopperDenseGemmPlan,
    batched_operand,
    fake_batched_operand,
)
from mla_var3.kernel.errors import CutlassDirError, UserError
from mla_var3.kernel.upstream import cutlass_dir, example_module_name, load_example

ROOT = Path(__file__).resolve().parents[1]
FAKE_TREE = ROOT / "tests" / "fixtures" / "upstream"
TOY = "examples/python/CuTeDSL/cute/toy/kernel/scale/scale.py"
BROKEN = "examples/python/CuTeDSL/cute/toy/kernel/broken/broken.py"
SM90A = Arch.parse("sm_90a")
SQUARE = {"m": 4096, "n": 4096, "k": 4096}


@pytest.fixture
def isolated_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Undo what loading examples adds to ``sys.path`` and ``sys.modules``."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


@pytest.fixture
def fake_cutlass(monkeypatch: pytest.MonkeyPatch, isolated_imports: None) -> Path:
    monkeypatch.setenv("CUTLASS_DIR", str(FAKE_TREE))
    return FAKE_TREE


# --- the loader, on tests/fixtures/upstream (no CUTLASS needed) -----------------------------
def test_load_example_imports_its_neighbours(fake_cutlass: Path) -> None:
    module = load_example(TOY)
    assert module.ToyKernel()(2.0) == 2.0 * 3.0 + 1.0  # helpers.toy_helpers and scale_config resolved
    assert str(fake_cutlass / "examples/python/CuTeDSL") in sys.path
    assert module.__name__ == example_module_name(TOY) == "cutlass_example__cute__toy__kernel__scale__scale"
    assert sys.modules[module.__name__] is module
    # The DSL reads a kernel's source through its module: it must be inspectable.
    assert "toy_helpers.SCALE" in inspect.getsource(module.ToyKernel)
    assert load_example(TOY) is module  # loaded once per process


def test_relative_cutlass_dir_is_taken_from_the_repo_root(monkeypatch: pytest.MonkeyPatch, isolated_imports: None) -> None:
    monkeypatch.setenv("CUTLASS_DIR", str(FAKE_TREE.relative_to(ROOT)))
    assert cutlass_dir() == FAKE_TREE
    assert load_example(TOY).__file__ == str(FAKE_TREE / TOY)


def test_default_cutlass_dir_comes_from_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUTLASS_DIR", raising=False)
    assert cutlass_dir() == ROOT / "third_party" / "cutlass"
    assert fingerprint.cutlass_dir is upstream.cutlass_dir is project.cutlass_dir


def test_missing_example_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUTLASS_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(CutlassDirError) as info:
        load_example(TOY)
    message = str(info.value)
    assert message == (
        f"CUTLASS example {TOY} not found under {tmp_path / 'nowhere'}; run `nox -s cutlass` or set CUTLASS_DIR"
    )
    assert isinstance(info.value, UserError) and info.value.exit_code == 2


def test_a_failing_example_is_not_left_half_imported(fake_cutlass: Path) -> None:
    with pytest.raises(ImportError, match="no_such_helper"):
        load_example(BROKEN)
    assert example_module_name(BROKEN) not in sys.modules


def test_another_checkout_replaces_the_module(fake_cutlass: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_example(TOY)
    other = tmp_path / "other"
    shutil.copytree(FAKE_TREE, other)
    example = other / TOY
    example.write_text(example.read_text().replace("+ OFFSET", "- OFFSET"))
    monkeypatch.setenv("CUTLASS_DIR", str(other))
    second = load_example(TOY)
    assert second is not first and second.__file__ == str(example.resolve())
    assert second.ToyKernel()(2.0) == 2.0 * 3.0 - 1.0


def test_another_checkout_brings_its_own_siblings(fake_cutlass: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_example(TOY)
    first_helpers = sys.modules["helpers.toy_helpers"]
    other = tmp_path / "other"
    shutil.copytree(FAKE_TREE, other)
    helpers = other / "examples/python/CuTeDSL/helpers/toy_helpers.py"
    helpers.write_text(helpers.read_text().replace("SCALE = 3.0", "SCALE = 5.0"))
    monkeypatch.setenv("CUTLASS_DIR", str(other))
    second = load_example(TOY)
    assert second.ToyKernel()(2.0) == 2.0 * 5.0 + 1.0  # not the first checkout's cached helpers
    assert sys.modules["helpers.toy_helpers"] is not first_helpers
    assert str(FAKE_TREE / "examples/python/CuTeDSL") not in sys.path
    assert str((other / "examples/python/CuTeDSL").resolve()) in sys.path
    # Siblings another checkout put there by other means (its root first on sys.path) go too.
    sys.path.insert(0, str(FAKE_TREE / "examples/python/CuTeDSL"))
    del sys.modules["helpers"], sys.modules["helpers.toy_helpers"]
    assert importlib.import_module("helpers.toy_helpers").SCALE == 3.0  # the first checkout's
    assert load_example(TOY).ToyKernel()(2.0) == 2.0 * 5.0 + 1.0
    assert str(FAKE_TREE / "examples/python/CuTeDSL") not in sys.path
    assert not [m for m in sys.modules.values() if str(FAKE_TREE) in (m.__dict__.get("__file__") or "")]


# --- the plan without CUTLASS (in process: main() returns the exit code the process would) ------
def _run(entry: str, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """The CLI (``mla_var3.kernel``) or a kernel package's ``__main__`` run here, with ``argv``."""
    from mla_var3.kernel.cli import main

    if entry == "mla_var3.kernel":
        return main(argv)
    monkeypatch.setattr(sys, "argv", [entry, *argv])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module(f"{entry}.__main__", run_name="__main__")
    return int(exited.value.code)


@pytest.mark.parametrize(
    ("entry", "argv"),
    [
        ("mla_var3.kernel", ["cutlass_hopper_dense_gemm", "--compile-only"]),
        ("mla_var3.kernel.cute_python.gemm.cutlass_dense_gemm.imported", ["--compile-only"]),
    ],
)
def test_cli_without_cutlass_is_one_clear_line(
    entry: str, argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CUTLASS_DIR", "/nonexistent")
    assert _run(entry, argv, monkeypatch) == 2
    out, err = capsys.readouterr()
    assert err == f"error: CUTLASS example {EXAMPLE} not found under /nonexistent; run `nox -s cutlass` or set CUTLASS_DIR\n"
    assert out == ""


def test_list_does_not_import_the_example(
    monkeypatch: pytest.MonkeyPatch, isolated_imports: None, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CUTLASS_DIR", "/nonexistent")
    assert _run("mla_var3.kernel", ["--list"], monkeypatch) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("cutlass_hopper_dense_gemm ") and "sm_90a" in line for line in lines)
    assert not [name for name in sys.modules if name.startswith("cutlass_example__")]


def test_compile_and_launch_operands_have_one_type() -> None:
    """The fake operands we compile against are typed like the views launches pass (CPU tensors
    stand in for CUDA ones: their DLPack memory space is ``generic`` instead of ``gmem``)."""
    import cutlass
    import torch
    from cutlass._mlir import ir

    with ir.Context():
        fake = str(fake_batched_operand(cutlass.Float16).mlir_type)
        for rows, cols in ((1000, 520), (4096, 4096)):
            real = str(batched_operand(torch.empty((rows, cols), dtype=torch.float16)).mlir_type)
            assert real.replace("generic", "gmem") == fake == '!cute.memref<f16, gmem, align<16>, "(?,?,?):(?{i64},1,?{i64})">'


def test_bfloat16_is_not_offered() -> None:
    assert CutlassHopperDenseGemmPlan.dtypes == ("float16",)
    with pytest.raises(UserError, match="does not implement dtype 'bfloat16'"):
        CutlassHopperDenseGemmPlan("bfloat16")


# --- with a CUTLASS checkout --------------------------------------------------------------
def _compile(config_index: int):
    from mla_var3.kernel.compile_cache import compile_cached

    plan = CutlassHopperDenseGemmPlan()
    return compile_cached(plan, plan._autotune_configs()[config_index], SQUARE, SM90A, need_function=False).compiled


@pytest.mark.cutlass
@pytest.mark.parametrize(
    ("config_index", "stages", "wgmma_per_k_tile"),
    # 4 (7) stages of 128x64 + 256x64 (128x64 + 128x64) fp16 fill 227 KiB; each 64-wide K tile is
    # 4 WGMMA k-steps, on two warpgroups of 64x256 (one warpgroup of 64x128, twice).
    [(0, 4, 4), (1, 7, 8)],
)
def test_compiles_for_sm90a_to_wgmma_and_tma(config_index: int, stages: int, wgmma_per_k_tile: int) -> None:
    from mla_var3.analysis import analyze_cubin

    compiled = _compile(config_index)
    analysis = analyze_cubin(compiled.cubin, "sm_90a", compiled.dynamic_smem_bytes)
    classes = analysis.to_dict()["sass_classes"]
    assert classes.get("wgmma", 0) >= wgmma_per_k_tile, classes
    assert classes.get("tma_load", 0) >= 2 and classes.get("tma_store", 0) >= 1, classes
    (kernel,) = analysis.resources
    assert kernel.local_bytes == 0, "register spills"
    tile_m, tile_n = CutlassHopperDenseGemmPlan()._autotune_configs()[config_index]["tile_mn"]
    # Barriers first, then A and B stages at 1 KiB alignment (dense_gemm.py:441-457).
    assert compiled.dynamic_smem_bytes == 1024 + stages * (tile_m + tile_n) * 64 * 2


@pytest.mark.cutlass
def test_upstream_rejects_bfloat16(isolated_imports: None) -> None:
    import cutlass

    kernel = load_example(EXAMPLE).HopperWgmmaGemmKernel
    f16, bf16, f32 = cutlass.Float16, cutlass.BFloat16, cutlass.Float32
    assert kernel.is_valid_dtypes(f16, f16, f32, f16, "k", "k")
    assert not kernel.is_valid_dtypes(bf16, bf16, f32, bf16, "k", "k")


@pytest.mark.cutlass
def test_fingerprint_follows_the_upstream_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    present = fingerprint.plan_fingerprint(CutlassHopperDenseGemmPlan)
    copy = tmp_path / "copy"
    (copy / EXAMPLE).parent.mkdir(parents=True)
    shutil.copyfile(cutlass_dir() / EXAMPLE, copy / EXAMPLE)
    monkeypatch.setenv("CUTLASS_DIR", str(tmp_path / "empty"))
    missing = fingerprint.plan_fingerprint(CutlassHopperDenseGemmPlan)
    monkeypatch.setenv("CUTLASS_DIR", str(copy))
    assert fingerprint.plan_fingerprint(CutlassHopperDenseGemmPlan) == present  # content, not location
    (copy / EXAMPLE).write_text((copy / EXAMPLE).read_text() + "\n# edited\n")
    edited = fingerprint.plan_fingerprint(CutlassHopperDenseGemmPlan)
    assert len({present, missing, edited}) == 3
