"""GPU snippets (the memory micro-benchmarks in ``snippets/gpu/``): the registry finds their plans, each
compiles for sm_90a on the CPU with the SASS that proves what it measures, their comparison groups
validate, the warm-L2 timing mode times one input set kept in L2; on a GPU, every plan is correct."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mla_var3.evidence.groups import Member, get_group
from mla_var3.evidence.typed import EvidenceError
from mla_var3.kernel.bench import (
    TIMING_METHOD,
    WARM_L2_METHOD,
    input_sets_for_cold_l2,
    input_sets_for_l2,
    summarize,
)
from mla_var3.kernel.registry import SNIPPETS_GPU, RegistrationError, all_plans, snippet_plans

SNIPPET_PLANS = {
    "copy_vector_width": ("copy_vec32", "copy_vec64", "copy_vec128", "copy_torch"),
    "smem_swizzle": ("transpose_smem", "transpose_smem_swizzled"),
    "async_copy_vs_tma": ("tile_load_cp_async", "tile_load_tma"),
    "named_barrier_handoff": ("named_barrier_arrive", "named_barrier_sync"),
    "named_barrier_pingpong": ("named_barrier_pingpong",),
    "named_barrier_relay": ("named_barrier_relay",),
    "proxy_fence_tma_store": ("tma_store_fenced", "tma_store_unfenced"),
    "global_coalescing": ("copy_row_walk", "copy_column_walk"),
}
MEMORY_GROUPS = ("copy_vector_width", "smem_swizzle", "async_copy_vs_tma", "l2_vs_dram")
H200_L2_BYTES = 60 << 20  # torch's L2_cache_size on our H200 (the device section of every run record)


def _sass(kernel: str) -> tuple[str, Counter[str]]:
    """The sm_90a SASS of ``kernel`` (default config, first check shape) and its mnemonic counts."""
    from mla_var3.analysis.sass import disassemble, histogram_of
    from mla_var3.kernel.compile_cache import compile_cached

    plan = all_plans()[kernel]()
    result = compile_cached(
        plan, plan.default_config(), dict(plan.check_shapes[0]), "sm_90a", need_function=False
    )
    text = disassemble(result.compiled.cubin)
    return text, Counter(histogram_of(text))


# --- registration ---------------------------------------------------------------------------------
def test_the_registry_finds_every_snippet_plan() -> None:
    plans = all_plans()
    for stem, names in SNIPPET_PLANS.items():
        for name in names:
            assert plans[name].__module__ == f"snippets.gpu.{stem}"
            assert plans[name].layer == "memory"
    assert {p.stem for p in SNIPPETS_GPU.glob("*.py")} == set(SNIPPET_PLANS)


def test_a_snippet_without_plans_fails_registration(tmp_path: Path) -> None:
    (tmp_path / "lonely.py").write_text('"""A GPU snippet that forgot its PLANS."""\n')
    with pytest.raises(
        RegistrationError, match=r"lonely.py exports no plan; end a GPU snippet with `PLANS = "
    ):
        snippet_plans(tmp_path, package="h12_fake_snippets")


def test_plans_refuse_shapes_off_their_tile() -> None:
    from mla_var3.kernel.errors import UnsupportedShapeError

    with pytest.raises(UnsupportedShapeError, match="copy_vec64 needs --n a multiple of 4096"):
        all_plans()["copy_vec64"]().check_shape({"n": 5000})
    with pytest.raises(UnsupportedShapeError, match="transpose_smem needs --n a multiple of 32, got 48"):
        all_plans()["transpose_smem"]().check_shape({"m": 64, "n": 48})
    with pytest.raises(UnsupportedShapeError, match="tile_load_tma needs --m a multiple of 64, got 100"):
        all_plans()["tile_load_tma"]().check_shape({"m": 100, "n": 128})


# --- SASS (compiled for sm_90a on the CPU) -----------------------------------------------------------
@pytest.mark.parametrize(("kernel", "load", "store", "per_thread"), [
    ("copy_vec32", "LDG.E", "STG.E", 16),
    ("copy_vec64", "LDG.E.64", "STG.E.64", 8),
    ("copy_vec128", "LDG.E.128", "STG.E.128", 4),
])  # fmt: skip
def test_copy_width_is_the_access_width_in_sass(kernel: str, load: str, store: str, per_thread: int) -> None:
    """The same 64 bytes per thread, in 16, 8 or 4 accesses of exactly the plan's width."""
    _, ops = _sass(kernel)
    global_ops = {op: n for op, n in ops.items() if op.startswith(("LDG", "STG"))}
    assert global_ops == {load: per_thread, store: per_thread}


def test_swizzle_changes_address_arithmetic_not_the_smem_accesses() -> None:
    """Both transposes: 4 STS and 4 LDS of 32 bits. Unswizzled, a thread's four column reads share one
    address register (immediate offsets); swizzled, each address is XORed (LOP3.LUT 0x3c) on its own."""
    plain_text, plain = _sass("transpose_smem")
    swizzled_text, swizzled = _sass("transpose_smem_swizzled")
    for ops in (plain, swizzled):
        assert {op: n for op, n in ops.items() if op.startswith(("LDS", "STS"))} == {"LDS": 4, "STS": 4}
    lds = re.compile(r"\bLDS R\d+, \[(R\d+)(\+0x[0-9a-f]+)?\]")
    assert len({m.group(1) for m in lds.finditer(plain_text)}) == 1
    assert len({m.group(1) for m in lds.finditer(swizzled_text)}) == 4
    xor = re.compile(r"LOP3\.LUT .*0x3c")
    assert len(xor.findall(swizzled_text)) >= 8 > len(xor.findall(plain_text))


def test_cp_async_and_tma_load_the_tile_their_own_way_and_store_it_alike() -> None:
    _, cp_async = _sass("tile_load_cp_async")
    _, tma = _sass("tile_load_tma")
    # cp.async: 64x128 fp32 = 2048 16-byte copies per tile, 16 per thread of 128, then one group wait.
    assert (
        cp_async["LDGSTS.E.128"] == 16
        and cp_async["LDGDEPBAR"] == 1
        and not any(op.startswith("UTMA") for op in cp_async)
    )
    # TMA: one 2-D tile load, an mbarrier armed with the transaction bytes, no per-thread copies.
    assert (
        tma["UTMALDG.2D"] == 1
        and tma["SYNCS.ARRIVE.TRANS64"] == 1
        and not any(op.startswith("LDGSTS") for op in tma)
    )
    for ops in (cp_async, tma):  # the same store: SMEM -> registers -> global, 128 bits at a time
        assert (ops["LDS.128"], ops["STG.E.128"]) == (16, 16)


def test_the_estimate_snippet_evaluates_the_transpose_layouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """``snippets/cpu/memory_estimates.py`` (run by the page's build): the row-major tile puts a column in one
    bank (32 passes), the swizzled one spreads it over all 32; the docs' composition form still fails."""
    from mla_var3.project import REPO_ROOT

    monkeypatch.syspath_prepend(str(REPO_ROOT))
    from snippets.cpu import memory_estimates

    rows = memory_estimates.bank_table().splitlines()[2:]
    assert [row.rsplit("|", 3)[1:3] for row in rows] == [[" 1 ", " 32 "], [" 32 ", " 1 "]]
    assert "invalid type for the LHS" in memory_estimates.composition_error()
    assert memory_estimates.copy_time(1 << 26).startswith("112 µs (512 MiB")


# --- groups --------------------------------------------------------------------------------------------
def test_memory_groups_are_declared_with_shapes_that_time_the_right_memory() -> None:
    for name in MEMORY_GROUPS:
        group = get_group(name)
        assert all(all_plans()[m.kernel].layer == "memory" or m.kernel == "copy_torch" for m in group.members)
    copy = get_group("copy_vector_width")
    assert [m.id for m in copy.members] == ["copy_vec32", "copy_vec64", "copy_vec128", "copy_torch"]
    assert copy.reference == "copy_vec128"
    # DRAM-resident groups: one input set (source + destination) is over 3x the L2, so every launch is cold.
    for name, config in (("copy_vector_width", "n67108864-float32"), ("smem_swizzle", "m8192-n8192-float32"),
                         ("async_copy_vs_tma", "m8192-n8192-float32")):  # fmt: skip
        assert config in get_group(name).shapes
    assert input_sets_for_cold_l2(2 * 4 * (1 << 26), H200_L2_BYTES) == 1
    # l2_vs_dram: the same kernel twice; its working set fits the L2 with room to spare.
    l2 = get_group("l2_vs_dram")
    assert {m.kernel for m in l2.members} == {"copy_vec128"}
    assert {m.id: m.l2 for m in l2.members} == {"dram": "cold", "l2": "warm"}
    ((n,),) = [tuple(int(d[1:]) for d in s.split("-")[:-1]) for s in l2.shapes]
    assert 2 * 4 * n <= H200_L2_BYTES // 1.5


def test_a_member_l2_mode_is_checked() -> None:
    with pytest.raises(EvidenceError, match="member 'x': l2 must be one of cold, warm, got 'lukewarm'"):
        Member("copy_vec128", name="x", l2="lukewarm")


# --- the warm-L2 timing mode -----------------------------------------------------------------------------
def test_warm_l2_times_one_set_and_says_so() -> None:
    assert input_sets_for_l2("warm", 32 << 20, H200_L2_BYTES) == 1
    assert (
        input_sets_for_l2("cold", 32 << 20, H200_L2_BYTES)
        == input_sets_for_cold_l2(32 << 20, H200_L2_BYTES)
        == 6
    )
    with pytest.raises(ValueError, match="unknown L2 mode 'hot'"):
        input_sets_for_l2("hot", 1, 1)
    assert summarize([1.0, 2.0], 3, 1).method == TIMING_METHOD
    assert summarize([1.0, 2.0], 3, 1, WARM_L2_METHOD).method == WARM_L2_METHOD
    assert "cold L2" in TIMING_METHOD and "warm L2" in WARM_L2_METHOD


def test_time_group_touches_a_warm_member_before_its_timed_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    """``time_group`` with the CUDA parts faked: the cold member rotates its sets, the warm one has a single
    set, launched once untimed right before each round's timed launches; method and notes say which."""
    import torch

    from mla_var3.evidence import group_run
    from mla_var3.evidence.groups import Group
    from mla_var3.kernel import bench, compile_cache, device, registry, runner
    from mla_var3.kernel.arch import Arch
    from mla_var3.kernel.backends import Compiled

    log: list[tuple[str, Any]] = []

    class CpuCopy(all_plans()["copy_torch"]):  # type: ignore[misc]
        def prepare_inputs(self, shape: dict[str, int]) -> dict[str, torch.Tensor]:
            return {"src": torch.randn(shape["n"])}

    def launch(inputs: dict[str, torch.Tensor], outputs: dict[str, torch.Tensor]) -> None:
        log.append(("launch", id(inputs["src"])))

    def fake_event_times(launch: Any, sets: int, iters: int, host: float, first: int = 0) -> list[float]:
        log.append(("timed", sets))
        for i in range(iters):
            launch((first + i) % sets)
        return [10.0 + 0.01 * (i % 3) for i in range(iters)]

    # A 1 MiB L2: the cold member's 512 KiB set (source and destination) is rotated six times over.
    gpu = device.GpuInfo("NVIDIA H200", (9, 0), "uuid", 132, 1 << 20, None, None, str(torch.__version__))
    monkeypatch.setattr(registry, "get_plan", lambda name: CpuCopy)
    monkeypatch.setattr(device, "detect_gpu", lambda: gpu)
    monkeypatch.setattr(runner, "choose_target", lambda *a: (Arch.parse("sm_90"), "run", "fake"))
    monkeypatch.setattr(
        compile_cache, "compile_cached", lambda *a, **k: _FakeCompile(Compiled(launch, "sm_90", None, 0.0))
    )
    monkeypatch.setattr(bench, "warm_up", lambda launch, sets, n, s: (n, 1e-5))
    monkeypatch.setattr(bench, "event_times_us", fake_event_times)
    monkeypatch.setattr(bench, "measure_ceilings", lambda: [])
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    members = (Member("copy_torch", name="cold"), Member("copy_torch", name="warm", l2="warm"))
    group = Group("warm_vs_cold", "test", "cold", members, ("n65536-float32",), launches_per_round=3)

    run = group_run.time_group(group, "n65536-float32", progress=lambda line: None)

    timing = {m.member: m for m in run.members}
    assert (timing["cold"].input_sets, timing["warm"].input_sets) == (6, 1)
    assert (timing["cold"].timing.method, timing["warm"].timing.method) == (TIMING_METHOD, WARM_L2_METHOD)
    assert run.notes == [
        "member warm timed with a warm L2: one input set, touched by an untimed launch before its launches "
        "of each round"
    ]
    # Each batch of the warm member: one untimed launch of its only set, then the timed ones on the same set.
    batches = [i for i, entry in enumerate(log) if entry == ("timed", 1)]
    assert len(batches) == len(run.rounds)
    for i in batches:
        untimed, timed = log[i - 1], log[i + 1 : i + 4]
        assert untimed[0] == "launch" and all(entry == untimed for entry in timed)


class _FakeCompile:
    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled

    def analysis_dict(self) -> None:
        return None


# --- on a GPU ------------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("kernel", [name for names in SNIPPET_PLANS.values() for name in names])
def test_snippet_plans_are_correct_on_randn(kernel: str) -> None:
    from mla_var3.kernel.runner import RunRequest, run_plan

    plan = all_plans()[kernel]()
    for shape in plan.check_shapes:
        result = run_plan(plan, RunRequest(shape=dict(shape), check=True, bench=False))
        assert result.mode == "run" and result.check is not None and result.check["passed"], result.check


@pytest.mark.gpu
def test_the_unfenced_tma_store_is_counted_and_the_fenced_one_is_exact() -> None:
    """Both hand-off forms (``snippets/gpu/proxy_fence_tma_store.py``) over many launches at the default
    shape, NaN-poisoned before each: the fenced one must equal ``2 x`` in every element of every launch;
    the unfenced one's mismatched elements are counted and printed (``-s``), not judged -- a race need not
    show in any given run, and the page says so."""
    import torch

    from mla_var3.kernel.arch import Arch

    launches = 200
    counts = {}
    for kernel in ("tma_store_fenced", "tma_store_unfenced"):
        plan = all_plans()[kernel]()
        shape = plan.default_shape()
        backend = plan.plan(plan.default_config())
        compiled = backend.compile(shape, Arch.parse("sm_90a"))
        inputs = plan.prepare_inputs(shape)
        outputs = plan.allocate_outputs(inputs, shape)
        launch, expected = backend.bind(compiled, inputs, outputs), 2.0 * inputs["x"]
        mismatched = torch.zeros((), dtype=torch.int64, device=expected.device)
        for _ in range(launches):
            outputs["y"].fill_(float("nan"))
            launch()
            mismatched += (outputs["y"] != expected).sum()
        counts[kernel] = int(mismatched)
        print(
            f"{kernel}: {counts[kernel]} of {launches * expected.numel()} elements mismatched over {launches} launches"
        )
    assert counts["tma_store_fenced"] == 0


def test_pingpong_hands_the_slot_off_in_both_directions() -> None:
    """named_barrier_pingpong: each side arrives on one barrier and waits on the other (ids 1 and 2),
    the writer's wait and the reader's arrive predicated off for the first and last round."""
    text, _ = _sass("named_barrier_pingpong")
    bars = re.findall(r"(@P\d )?\s*BAR\.(ARV|SYNC)\S* (0x[12]), 0x100", text)
    assert sorted((kind, bar) for _, kind, bar in bars) == [
        ("ARV", "0x1"),
        ("ARV", "0x2"),
        ("SYNC", "0x1"),
        ("SYNC", "0x2"),
    ]
    assert {bar for pred, _, bar in bars if pred} == {"0x2"}, "only the CONSUMED hand-off skips a round"


def test_relay_hands_off_on_barriers_named_at_run_time() -> None:
    """named_barrier_relay: the same four barrier instructions as the ping-pong kernel, but each takes its
    barrier id from a register (a fresh barrier per hand-off), not an immediate."""
    text, _ = _sass("named_barrier_relay")
    bars = re.findall(r"BAR\.(ARV|SYNC)\S* (\S+), 0x100", text)
    assert sorted(kind for kind, _ in bars) == ["ARV", "ARV", "SYNC", "SYNC"]
    assert all(re.fullmatch(r"R\d+", bar) for _, bar in bars), bars
