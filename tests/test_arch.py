"""The arch rule (docs/contributing/evidence-model.md) and the runner's choice of target."""

from __future__ import annotations

import pytest

from mla_var3.kernel.arch import Arch, check_supported, runnable_arch
from mla_var3.kernel.device import GpuInfo
from mla_var3.kernel.errors import ArchError, NoGpuError
from mla_var3.kernel.registry import get_plan
from mla_var3.kernel.runner import choose_target

H200 = GpuInfo("NVIDIA H200", (9, 0), "GPU-x", 132, 60 << 20, "580", "13.0", "2.11")


@pytest.mark.parametrize(
    ("arch", "cc", "runs"),
    [
        ("sm_80", (8, 0), True),
        ("sm_80", (8, 9), True),
        ("sm_80", (9, 0), False),  # SASS only: measured on the H200
        ("sm_80", (10, 0), False),
        ("sm_90a", (9, 0), True),
        ("sm_90a", (10, 0), False),
        ("sm_90a", (8, 9), False),
        ("sm_100a", (10, 0), True),
        ("sm_100a", (10, 3), False),
        ("sm_100f", (10, 3), True),
        ("sm_100f", (12, 0), False),
        ("sm_103a", (10, 3), True),
        ("sm_120a", (10, 0), False),
    ],
)
def test_runs_on(arch: str, cc: tuple[int, int], runs: bool) -> None:
    assert Arch.parse(arch).runs_on(cc) is runs


def test_parse_rejects_garbage() -> None:
    with pytest.raises(ArchError, match="unknown arch 'hopper'"):
        Arch.parse("hopper")


def test_check_supported_names_the_fix() -> None:
    with pytest.raises(ArchError, match=r"does not support sm_100a; it supports sm_90a \(pass --arch sm_90a\)"):
        check_supported("k", ("sm_90a",), "sm_100a")


def test_runnable_arch_prefers_first_declared_that_runs() -> None:
    assert runnable_arch(("sm_100a", "sm_90a", "sm_80"), (9, 0)) == Arch.parse("sm_90a")
    assert runnable_arch(("sm_100a",), (9, 0)) is None


def test_choose_target_runs_elementwise_on_h200() -> None:
    arch, mode, _ = choose_target(get_plan("elementwise_add"), None, False, H200)
    assert (arch.name, mode) == ("sm_90a", "run")


def test_choose_target_mismatch_compiles_instead() -> None:
    arch, mode, reason = choose_target(get_plan("elementwise_add"), "sm_100a", False, H200)
    assert (arch.name, mode) == ("sm_100a", "compile")
    assert "not launching" in reason and "NVIDIA H200" in reason


def test_choose_target_without_gpu_is_a_clear_error() -> None:
    with pytest.raises(NoGpuError, match="--compile-only --arch sm_80"):
        choose_target(get_plan("elementwise_add"), None, False, None)


def test_choose_target_compile_only_needs_no_gpu() -> None:
    arch, mode, _ = choose_target(get_plan("elementwise_add"), "sm_90a", True, None)
    assert (arch.name, mode) == ("sm_90a", "compile")
