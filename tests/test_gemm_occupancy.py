"""The CTAs-per-SM arithmetic of ``snippets/cpu/gemm_occupancy.py`` and each worklog step's residency.

The step checks build the kernel classes (no compile) and read the ``gemm_bf16_steps`` group record
for registers: they fail when a step's SMEM budget, thread count or recorded registers move its
residency, and the page ``occupancy-vs-specialization`` must then be re-read.
"""

import pytest

from snippets.cpu import gemm_occupancy as occ


def test_register_limit_rounds_each_warp_up_to_256_registers() -> None:
    # 154 registers x 32 lanes = 4928, allocated as 5120: 12 warps fit in 65536, so 3 CTAs of 4 warps.
    assert occ.ctas_per_sm(threads=128, registers=154, smem_bytes=0).by_registers == 3
    assert occ.ctas_per_sm(threads=128, registers=160, smem_bytes=0).by_registers == 3
    assert occ.ctas_per_sm(threads=128, registers=128, smem_bytes=0).by_registers == 4


def test_smem_limit_adds_the_per_block_reservation() -> None:
    # 42 + 1 KiB: 228 // 43 = 5. 113 + 1 KiB fits twice; 114 + 1 KiB once, where 228 // 114 would say 2.
    assert occ.ctas_per_sm(128, 32, 42 * 1024).by_smem == 5
    assert occ.ctas_per_sm(128, 32, 113 * 1024).by_smem == 2
    assert occ.ctas_per_sm(128, 32, 114 * 1024).by_smem == 1


def test_residency_is_the_least_limit_and_names_it() -> None:
    r = occ.ctas_per_sm(threads=384, registers=168, smem_bytes=226 * 1024)
    assert (r.ctas, r.limit) == (1, "SMEM and registers")
    assert occ.ctas_per_sm(threads=32, registers=16, smem_bytes=0).ctas == occ.CTAS_PER_SM_MAX


def test_a_block_over_the_opt_in_maximum_is_refused() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        occ.ctas_per_sm(128, 32, 228 * 1024)


def test_setmaxnreg_pool_is_the_register_file_over_the_bounded_threads() -> None:
    assert occ.setmaxnreg_pool(384) == "168 registers per thread"
    assert occ.setmaxnreg_pool(384, 2) == "80 registers per thread"


@pytest.fixture(scope="module")
def steps() -> dict[str, occ.Step]:
    pytest.importorskip("cutlass")
    return occ.group_steps()


def test_v0_hides_latency_with_three_register_bound_ctas(steps: dict[str, occ.Step]) -> None:
    v0 = steps["v0"]
    assert (v0.threads, v0.stages) == (128, 1)
    assert (v0.residency.ctas, v0.residency.limit) == (3, "registers")
    assert v0.residency.by_smem == 5
    assert v0.k_tiles_in_flight == 3


@pytest.mark.parametrize("step", ["v1", "v2", "v3", "v4", "v5"])
def test_later_steps_hold_one_cta_pinned_by_smem_and_registers(steps: dict[str, occ.Step], step: str) -> None:
    s = steps[step]
    assert (s.residency.ctas, s.residency.limit) == (1, "SMEM and registers")
    assert s.k_tiles_in_flight == 4
    assert s.accumulator_registers == occ.REGISTERS_PER_SM // 2  # a 128 x 256 fp32 accumulator


def test_v1_and_v2_differ_in_threads_not_in_residency_or_depth(steps: dict[str, occ.Step]) -> None:
    v1, v2 = steps["v1"], steps["v2"]
    assert (v1.threads, v2.threads) == (256, 384)
    assert v1.residency.ctas == v2.residency.ctas and v1.stages == v2.stages
