"""MLA peers and our cuTile kernel: FlashMLA's build script, the cuTile ahead-of-time store, TileGym's
pinned source, the plans' skip reasons and split layout (CPU); each kernel against the fp32
reference at small shapes (GPU).

Exporting cubins needs ``cuda-tile[tileiras]==1.7.0`` (the ``nox -s cutile`` environment): those
tests skip elsewhere, saying so. GPU tests need the peers built (``third_party/flashmla``) and
exported (``build/cutile``) on the CPU machine first and carried along.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mla_var3.kernel.cutile import aot
from mla_var3.kernel.cutile.aot import ArraySpec, CubinStore, CuTileAotError, cubin_key
from mla_var3.kernel.cutile.mla.decode.split_kv.plan import MlaDecodeCuTilePlan, kernel_requests, layout
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.external.flashmla import build, library
from mla_var3.kernel.external.mla.flashmla.sm90.plan import FLASHMLA_CHECK_SHAPES, FlashMlaDecodePlan
from mla_var3.kernel.external.mla.tilegym.decode.plan import TILEGYM_CHECK_SHAPES, TileGymMlaDecodePlan
from mla_var3.kernel.external.tilegym import source
from mla_var3.kernel.workloads.mla import MLA_CHECK_SHAPES, mla_shape

FIXTURES = Path(__file__).parent / "fixtures" / "peers"
NO_EXPORT = "needs cuda-tile[tileiras]==1.7.0 to export cubins (nox -s cutile); this environment has " + (
    f"cuda-tile {aot.installed_version()}" if aot.installed_version() else "no cuda-tile")
needs_export = pytest.mark.skipif(not aot.can_export() or aot.installed_version() != aot.CUDA_TILE_VERSION,
                                  reason=NO_EXPORT)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def gitlink_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository whose one commit has ``csrc/cutlass`` as a submodule entry: (repo, commit, submodule commit)."""
    repo = tmp_path / "flashmla"
    repo.mkdir()
    _git(repo, "init", "-q")
    sub = "147f5673d0c1c3dcf66f78d677fd647e4a020219"
    _git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sub},csrc/cutlass")
    (repo / "README.md").write_text("fixture\n")
    _git(repo, "add", "README.md")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture")
    return repo, _git(repo, "rev-parse", "HEAD"), sub


# --- FlashMLA: build script and library ---------------------------------------------------
def test_submodule_commit_read_from_the_tree(gitlink_repo: tuple[Path, str, str]) -> None:
    repo, commit, sub = gitlink_repo
    assert build.submodule_commit(build.git_dir_of(repo), commit) == sub


def test_submodule_parse_rejects_a_plain_file() -> None:
    with pytest.raises(build.FlashMlaBuildError, match="is not a submodule"):
        build.parse_submodule_commit("100644 blob " + "a" * 40 + "\tcsrc/cutlass")


def test_missing_commit_names_the_env_var(gitlink_repo: tuple[Path, str, str]) -> None:
    repo, _, sub = gitlink_repo
    with pytest.raises(build.FlashMlaBuildError, match=r"\$CUTLASS_GIT_DIR"):
        build.require_commit(build.git_dir_of(repo), sub, "CUTLASS", "CUTLASS_GIT_DIR")


def test_export_tree_writes_the_commit(gitlink_repo: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, commit, _ = gitlink_repo
    build.export_tree(build.git_dir_of(repo), commit, ["README.md"], tmp_path / "out")
    assert (tmp_path / "out" / "README.md").read_text() == "fixture\n"


def test_nvcc_commands_target_sm90a_with_static_cudart(tmp_path: Path) -> None:
    compile_cmd = build.compile_command(Path("nvcc"), Path("a.cu"), Path("a.o"), tmp_path)
    assert "arch=compute_90a,code=sm_90a" in compile_cmd and "-fPIC" in compile_cmd
    assert not any("sm_100" in arg for arg in compile_cmd)
    assert f"-I{tmp_path / 'cutlass/include'}" in compile_cmd
    link = build.link_command(Path("nvcc"), [Path("a.o")], Path("lib.so"))
    assert link[link.index("-cudart") + 1] == "static" and "-shared" in link


def test_manifest_round_trip_and_is_built(tmp_path: Path) -> None:
    assert not build.is_built(tmp_path)
    manifest = build.Manifest(build.ABI_VERSION, "sm_90a", build.FLASHMLA_REPOSITORY, build.FLASHMLA_COMMIT, "c" * 40,
                              "13.0", [], [], build.LIBRARY, "0" * 64, 1, 1.0, "2026-01-01")
    (tmp_path / build.MANIFEST).write_text(manifest.to_json())
    (tmp_path / build.LIBRARY).write_bytes(b"\x7fELF")
    assert build.Manifest.read(tmp_path / build.MANIFEST) == manifest
    assert build.is_built(tmp_path)


def test_flashmla_plan_skips_with_the_build_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(library.LIBRARY_ENV, str(tmp_path / "missing.so"))
    reason = FlashMlaDecodePlan.unavailable_reason()
    assert reason is not None and "not built" in reason and "flashmla.build" in reason and "\n" not in reason


def test_flashmla_plan_rejects_other_page_sizes() -> None:
    plan = FlashMlaDecodePlan()
    with pytest.raises(UnsupportedShapeError, match="page size 64 only"):
        plan.validate_shape(mla_shape(page=16))
    for shape in FLASHMLA_CHECK_SHAPES:
        plan.validate_shape(shape)


def test_flashmla_lse_buffer_is_stored_as_flashmla_writes_it() -> None:
    plan = FlashMlaDecodePlan()
    shape = mla_shape(b=2, s=2, t=70, h=16)
    outputs = plan.allocate_outputs(plan.prepare_inputs(shape, device="cpu"), shape)
    assert outputs["lse"].shape == (2, 16, 2) and outputs["lse"].transpose(1, 2).is_contiguous()


# --- cuTile ahead of time -----------------------------------------------------------------
def test_array_spec_exposes_only_the_array_interface() -> None:
    fake = ArraySpec("bfloat16", (2, 3), (3, 1)).fake()
    interface = fake.__cuda_array_interface__
    assert interface["typestr"] == "<V2" and interface["strides"] == (6, 2) and interface["data"][0] % 16 == 0
    with pytest.raises(CuTileAotError, match="dtype"):
        ArraySpec("complex64", (2,)).fake()


def test_cubin_key_depends_on_symbol_source_and_arch() -> None:
    keys = {cubin_key("k_A", "s1", "sm_90a"), cubin_key("k_B", "s1", "sm_90a"), cubin_key("k_A", "s2", "sm_90a"),
            cubin_key("k_A", "s1", "sm_100a")}
    assert len(keys) == 4 and all(len(k) == 32 for k in keys)


@pytest.mark.skipif(aot.installed_version() == aot.CUDA_TILE_VERSION, reason="cuda-tile is installed here")
def test_cutile_plans_skip_without_cuda_tile() -> None:
    for plan in (MlaDecodeCuTilePlan, TileGymMlaDecodePlan):
        reason = plan.unavailable_reason()
        assert reason is not None and "cuda-tile 1.7.0 is required" in reason


def test_split_layout_fills_the_gpu_and_caps_tiles_at_the_page() -> None:
    config = {"tile_h": 32, "tile_n": 64}
    large = layout(mla_shape(b=128, t=8192), config)
    assert large["splits"] == 1 and large["row_blocks"] == 4
    small = layout(mla_shape(b=1, t=8192), config)
    assert small["row_blocks"] * small["splits"] >= 132 // 4 and small["split_len"] % 64 == 0
    paged16 = layout(mla_shape(b=2, t=63, page=16), config)
    assert paged16["tile_n"] == 16 and paged16["split_len"] % 16 == 0
    for shape in MLA_CHECK_SHAPES:  # every split starts inside the longest sequence
        sizes = layout(shape, config)
        assert (sizes["splits"] - 1) * sizes["split_len"] < shape["t"] * (2 if shape["varlen"] else 1)


def test_our_plan_rejects_pages_that_are_not_powers_of_two() -> None:
    with pytest.raises(UnsupportedShapeError, match="power of two"):
        MlaDecodeCuTilePlan().validate_shape(mla_shape(page=48))


def test_tilegym_plan_takes_one_token_and_fixed_lengths() -> None:
    plan = TileGymMlaDecodePlan()
    for bad in (mla_shape(s=2), mla_shape(varlen=1)):
        with pytest.raises(UnsupportedShapeError, match="--s 1 --varlen 0"):
            plan.validate_shape(bad)


def test_tilegym_source_hash_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(aot.STORE_ENV, str(tmp_path))
    assert "not fetched" in (source.unavailable_reason() or "")
    path = source.source_path()
    path.parent.mkdir(parents=True)
    path.write_text("tampered\n")
    with pytest.raises(source.TileGymSourceError, match="not the pinned file"):
        source._check(path.read_bytes(), str(path))


@needs_export
def test_export_writes_a_cubin_with_the_runtime_symbol(tmp_path: Path) -> None:
    """Our split kernel at a small shape: the symbol is what cuTile's launch path infers (a fixture)."""
    from mla_var3.kernel.cutile.mla.decode.split_kv import kernel

    expected = json.loads((FIXTURES / "split_symbol.json").read_text())
    fn_name, args = kernel_requests(expected["shape"], expected["config"], "bfloat16")["split"]
    store = CubinStore(tmp_path)
    entry = store.ensure(getattr(kernel, fn_name), args, "sm_90a")
    assert entry.symbol == expected["symbol"]
    cubin = store.cubin_path(entry.key).read_bytes()
    assert cubin[:4] == b"\x7fELF" and entry.symbol.encode() in cubin
    assert store.lookup(getattr(kernel, fn_name), args, "sm_90a") == entry


# --- GPU: each kernel against the reference -----------------------------------------------
PLANS = {plan.name: plan for plan in (FlashMlaDecodePlan, TileGymMlaDecodePlan, MlaDecodeCuTilePlan)}
GPU_CASES = (
    [("flashmla_decode", 0, shape) for shape in FLASHMLA_CHECK_SHAPES]
    + [("tilegym_mla_decode", c, shape) for c in (0, 1) for shape in TILEGYM_CHECK_SHAPES]
    + [("mla_decode_cutile", c, shape) for c in (0, 1) for shape in MLA_CHECK_SHAPES]
)


@pytest.mark.gpu
@pytest.mark.parametrize(("name", "config_index", "shape"), GPU_CASES,
                         ids=[f"{n}-c{c}-" + "-".join(f"{k}{v}" for k, v in s.items()) for n, c, s in GPU_CASES])
def test_kernel_matches_the_reference_on_gpu(name: str, config_index: int, shape: dict[str, int], tmp_cache: Path) -> None:
    from mla_var3.kernel.runner import RunRequest, run_plan

    plan = PLANS[name]()
    reason = plan.unavailable_reason()
    if reason:
        pytest.skip(reason)
    config = plan._autotune_configs()[config_index]
    result = run_plan(plan, RunRequest(shape=shape, config=config, check=True, bench=False))
    assert result.mode == "run", result.mode_reason
    assert result.check is not None and result.check["passed"], json.dumps(result.check["outputs"])


@pytest.mark.gpu
def test_flashmla_fp16_matches_the_reference_on_gpu(tmp_cache: Path) -> None:
    from mla_var3.kernel.runner import RunRequest, run_plan

    plan = FlashMlaDecodePlan("float16")
    if plan.unavailable_reason():
        pytest.skip(plan.unavailable_reason())
    result = run_plan(plan, RunRequest(shape=mla_shape(b=3, s=2, t=300, h=64, varlen=1), check=True, bench=False))
    assert result.check is not None and result.check["passed"], json.dumps(result.check["outputs"])
