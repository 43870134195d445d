"""The anti-pattern pages' claims, held by their snippets (``snippets/cpu/antipatterns``), compiled for sm_90a
on the CPU: each test compares the bad form with the fixed one in the way its page says they differ, so it
fails when a DSL or ptxas update makes the page wrong. The pages' checked snippets (``show(...)``) run too.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path

import pytest

from mla_var3.knowledge.expected import ATTRIBUTE, run

REPO = Path(__file__).resolve().parent.parent
PAGES = [*REPO.glob("docs/knowledge/anti-patterns/*.md"), *REPO.glob("docs/knowledge/languages/cute-dsl/anti-patterns/*.md")]
SNIPPETS = sorted(p.stem for p in (REPO / "snippets" / "cpu" / "antipatterns").glob("*.py") if p.stem != "__init__")


def declared_snippets() -> list[str]:
    """Every checked snippet (a function with ``@expect``) of ``snippets/cpu/antipatterns``."""
    targets = []
    for name in SNIPPETS:
        module = importlib.import_module(f"snippets.cpu.antipatterns.{name}")
        targets += [f"{module.__name__}:{fn}" for fn, value in vars(module).items() if hasattr(value, ATTRIBUTE)]
    return sorted(targets)


def test_every_snippet_with_checked_output_is_shown_on_a_page() -> None:
    pages = "\n".join(page.read_text() for page in PAGES)
    modules = {target.split(":")[0] for target in declared_snippets()}
    assert len(modules) >= 8 and all(module in pages for module in modules)


@pytest.mark.parametrize("target", declared_snippets())
def test_checked_snippet_still_does_what_it_declares(target: str) -> None:
    run(target)  # raises ExpectationError when the output or the error changed


# --- WGMMA in flight across a back-edge ----------------------------------------------------------------


@cache
def wgmma(wait: str) -> tuple[int, int, str, list[str]]:
    from snippets.cpu.antipatterns.wgmma_back_edge import wgmma_waits

    return wgmma_waits(wait)


def test_wgmma_in_flight_across_the_back_edge_is_serialized() -> None:
    hgmma, depbar, per_thread, remarks = wgmma("next")
    assert hgmma == depbar > 2  # a wait after every WGMMA, the prologue's included
    assert any(r.startswith("C7514") and "serialized" in r for r in remarks)
    assert per_thread == wgmma("same")[2] and per_thread.endswith(" 0 B local")  # not register pressure


def test_a_partial_wait_after_a_conditional_issue_is_serialized_and_waits_inside_the_branch_are_not() -> None:
    hgmma, depbar, _, remarks = wgmma("after")
    assert hgmma == depbar  # a wait after every WGMMA
    assert any(r.startswith("C7514") for r in remarks)
    hgmma, depbar, _, remarks = wgmma("inside")
    assert depbar < hgmma and not remarks


@pytest.mark.parametrize("wait", ["same", "accumulate"])
def test_waiting_in_the_iteration_or_accumulating_keeps_wgmma_async(wait: str) -> None:
    hgmma, depbar, _, remarks = wgmma(wait)
    assert hgmma == wgmma("next")[0] and depbar <= 3 < hgmma
    assert not any(r.startswith("C7514") for r in remarks)


# --- FMA contraction -----------------------------------------------------------------------------------


def test_the_contracted_rescale_is_an_ffma_and_the_difference_first_is_not() -> None:
    from snippets.cpu.antipatterns.fma_contraction import arithmetic, residuals

    for fastmath in (True, False):
        ptx, sass = arithmetic(difference_first=False, fastmath=fastmath)
        assert "fma" not in ptx and ptx.count("mul.f32") == 2 and "FFMA" in sass and "FADD" not in sass
    ptx, sass = arithmetic(difference_first=True)
    assert "FADD" in sass and "FFMA" not in sass
    nonzero, not_one, largest = residuals(samples=1000)
    assert nonzero > 900 and 0 < largest < 1e-6 and not_one >= 0


@pytest.mark.parametrize("arch", ["sm_80", "sm_100a"])
def test_the_contraction_happens_on_the_other_archs_the_page_lists(arch: str) -> None:
    from snippets.cpu.antipatterns.fma_contraction import arithmetic

    assert "FADD" not in arithmetic(difference_first=False, arch=arch)[1]
    assert "FFMA" not in arithmetic(difference_first=True, arch=arch)[1]


# --- run-time-indexed register arrays -----------------------------------------------------------------


def test_a_runtime_index_puts_the_array_in_local_memory() -> None:
    from snippets.cpu.antipatterns.dynamic_register_index import FORMS, local_memory

    (_, bad, _), (_, partial, unroll), (_, fixed, _) = FORMS
    fixed_counts = local_memory(fixed, 0)
    assert fixed_counts["STL"] == fixed_counts["LDL"] == fixed_counts["stack"] == 0
    for kernel, factor in ((bad, 1), (partial, unroll)):
        counts = local_memory(kernel, factor)
        assert counts["STL"] > 0 and counts["LDL"] > 0 and counts["stack"] >= 64  # 16 floats at least
        assert counts["spill"] == 0 and counts["registers"] < fixed_counts["registers"]  # not a spill


@pytest.mark.parametrize("arch", ["sm_80", "sm_100a"])
def test_local_memory_on_the_other_archs_the_page_lists(arch: str) -> None:
    from snippets.cpu.antipatterns.dynamic_register_index import FORMS, local_memory

    (_, bad, _), _, (_, fixed, _) = FORMS
    assert local_memory(bad, 1, arch)["stack"] > 0 == local_memory(fixed, 0, arch)["stack"]


def test_ptxas_remark_points_at_the_register_tensor() -> None:
    outcome = run("snippets.cpu.antipatterns.dynamic_register_index:remark")
    assert re.search(r"> *\d+ \|\s+frag = cute\.make_rmem_tensor", outcome.output)


# --- masking by a dynamic if -----------------------------------------------------------------------------


@pytest.mark.parametrize("cols", [16, 64])
def test_masking_by_if_grows_quadratically_and_select_stays_linear(cols: int) -> None:
    from snippets.cpu.antipatterns.masking_branch import counts, mask_by_branch, mask_by_select

    ifs, selp, sel = counts(mask_by_branch, cols)
    assert ifs == cols and selp == cols * (cols + 1) // 2 and sel > 4 * cols
    assert counts(mask_by_select, cols) == (0, cols, cols)


# --- configuration under a dynamic if ---------------------------------------------------------------


def test_a_config_int_under_a_runtime_if_makes_the_loop_dynamic() -> None:
    import cutlass

    from snippets.cpu.antipatterns.config_under_dynamic_if import (
        launch,
        launch_runtime_flag,
        loads_and_branches,
        sum_prefix_dynamic,
        sum_prefix_static,
    )

    dynamic = loads_and_branches(launch_runtime_flag, sum_prefix_dynamic, cutlass.Boolean(True))
    static = loads_and_branches(launch, sum_prefix_static, True)
    assert static.endswith("; 0 branches") and not dynamic.endswith("; 0 branches")


@pytest.mark.parametrize(("name", "code"), [("error_config_object", "TYPE_DYNAMIC_EXPR_UNSUPPORTED"),
                                            ("error_growing_list", "TYPE_UNSTABLE_JOIN")])  # fmt: skip
def test_a_mutable_object_under_a_runtime_if_is_refused(name: str, code: str) -> None:
    outcome = run(f"snippets.cpu.antipatterns.config_under_dynamic_if:{name}")
    assert f"error[{code}]" in outcome.error_text and "if wide:" in outcome.error_text


# --- too many stages for SMEM ---------------------------------------------------------------------------


def test_over_budget_stages_compile_and_only_the_host_code_complains() -> None:
    from snippets.cpu.antipatterns.smem_over_budget import (
        compiled,
        host_launch_message,
        launch_budget,
        staged_buffers,
    )

    assert "does NOT fit" in launch_budget(5) and " fits " in launch_budget(4)
    assert host_launch_message(compiled(staged_buffers, 4)) is None
    message = host_launch_message(compiled(staged_buffers, 5))
    assert message is not None and "shared memory exceeds" in message and "Allocated: 245760 bytes" in message


def test_the_dsl_check_leaves_out_the_static_smem() -> None:
    import cutlass.memory

    from snippets.cpu.antipatterns.smem_over_budget import byte_buffer, compiled, host_launch_message

    limit = cutlass.memory.get_smem_capacity_in_bytes("sm_90")
    assert host_launch_message(compiled(byte_buffer, limit)) is None  # + 1 KiB static: over the limit
    assert host_launch_message(compiled(byte_buffer, limit + 1)) is not None


def test_our_gemm_refuses_the_over_budget_config() -> None:
    outcome = run("snippets.cpu.antipatterns.smem_over_budget:over_budget_refused")
    assert isinstance(outcome.error, ValueError)


# --- TMA from one thread ---------------------------------------------------------------------------------


def test_tma_from_one_thread_puts_a_warpsync_before_the_elect() -> None:
    from snippets.cpu.antipatterns.tma_single_thread import compiled, sass_excerpt
    from snippets.cpu.dsl_tools import opcode_count, sass_counts

    for one_thread, warpsync in ((True, 1), (False, 0)):
        fn, printed = compiled(one_thread)
        sass = sass_counts(fn)
        assert printed.strip() == ""  # no warning, even with warnings{nvvm}
        assert opcode_count(sass, "UTMALDG") == opcode_count(sass, "ELECT") == 1
        assert opcode_count(sass, "WARPSYNC") == warpsync
    bad = sass_excerpt(True).splitlines()
    tid = re.match(r"S2R (R\d+), SR_TID\.X", bad[0]).group(1)
    guard = next(i for i, line in enumerate(bad) if re.search(rf"ISETP\S* P\d, PT, {tid}, RZ", line))
    assert guard < bad.index("WARPSYNC.ALL") < next(i for i, line in enumerate(bad) if line.startswith("ELECT"))


# --- a shared dump folder -------------------------------------------------------------------------------


def test_a_shared_dump_folder_hands_back_the_other_compiles_cubin() -> None:
    from snippets.cpu.antipatterns.shared_dump_dir import interleaved

    assert "artifacts.CUBIN holds negate_it; the binary the host code embeds holds double_it" in interleaved(True)
    assert "artifacts.CUBIN holds double_it;" in interleaved(False)


# --- a missing proxy fence before a TMA store ------------------------------------------------------------


def test_a_missing_proxy_fence_compiles_silently_and_only_the_fence_pair_disappears() -> None:
    from collections import Counter

    from mla_var3.analysis.sass import histogram_of
    from snippets.cpu.antipatterns.proxy_fence import compiled

    (fenced, fenced_said), (bare, bare_said) = compiled(True), compiled(False)
    assert fenced_said.strip() == bare_said.strip() == ""  # no warning, even with warnings{nvvm}
    difference = Counter(histogram_of(fenced))
    difference.subtract(histogram_of(bare))
    changed = {op: n for op, n in difference.items() if n and op != "NOP"}  # NOPs pad the code's alignment
    assert changed == {"MEMBAR.ALL.CTA": 1, "FENCE.VIEW.ASYNC.S": 1}


@pytest.mark.parametrize("proxy_fence", [True, False])
def test_the_fence_pair_sits_between_the_last_store_and_the_barrier_before_the_tma_store(proxy_fence: bool) -> None:
    from snippets.cpu.antipatterns.proxy_fence import sass_excerpt

    lines = [line.split()[0] for line in sass_excerpt(proxy_fence).splitlines()]
    store = lines.index(next(op for op in lines if op.startswith("UTMASTG")))
    barrier = max(i for i in range(store) if lines[i].startswith("BAR.SYNC"))
    before = lines[barrier - 2 : barrier] if proxy_fence else lines[barrier - 1 : barrier]
    assert before == (["MEMBAR.ALL.CTA", "FENCE.VIEW.ASYNC.S"] if proxy_fence else ["STS"])


# --- uncoalesced global access -------------------------------------------------------------------------


def test_the_column_walk_has_the_same_accesses_and_no_more_instructions() -> None:
    from snippets.cpu.antipatterns.coalescing import sass

    row, column = sass(False), sass(True)
    for counts in (row, column):
        assert {op: n for op, n in counts.items() if op.startswith(("LDG", "STG"))} == {"LDG.E": 4, "STG.E": 4}
    def instructions(counts: dict[str, int]) -> int:
        return sum(n for op, n in counts.items() if op != "NOP")

    assert instructions(column) <= instructions(row)  # the binary does not show the bad form


def test_a_warp_load_of_the_column_walk_touches_32_sectors_and_the_row_walk_4() -> None:
    from snippets.cpu.antipatterns.coalescing import sector_table

    rows = [line.split("|")[1:-1] for line in sector_table().splitlines()[2:]]
    assert [(r[0].strip(), r[3].strip()) for r in rows] == [("row walk", "4"), ("column walk", "32")]
