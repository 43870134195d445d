"""Comparison groups on the CPU: the round schedule with fake kernels, the paired interval on synthetic
timings, the verdict rule, the declared groups, and a group record through the model."""

from __future__ import annotations

import numpy as np
import pytest

from mla_var3.evidence.group_run import run_rounds
from mla_var3.evidence.groups import GROUPS, Group, Member
from mla_var3.evidence.stats import Speedup, paired_speedup, target_met, verdict
from mla_var3.evidence.typed import EvidenceError
from mla_var3.kernel.bench import ClockSample


class FakeGpu:
    """Members with a true per-launch time and multiplicative noise; records what ran, in order."""

    def __init__(self, true_us: dict[str, float], noise: float, seed: int = 1, drift: float = 0.0) -> None:
        self.true_us, self.noise, self.drift = true_us, noise, drift
        self.rng = np.random.default_rng(seed)
        self.calls: list[tuple[str, int, int]] = []

    def timer(self, member: str, launches: int, first: int) -> list[float]:
        self.calls.append((member, launches, first))
        clock = 1 + self.drift * len(self.calls)  # a GPU that slows down as it heats: hits every member alike
        noise = self.rng.normal(0.0, self.noise, size=launches)
        return list(self.true_us[member] * clock * np.exp(noise))

    @staticmethod
    def sampler() -> ClockSample:
        return ClockSample(sm_mhz=1500.0, power_w=650.0)


def test_every_round_times_every_member_once_in_rotated_order() -> None:
    gpu = FakeGpu({"ref": 100.0, "a": 95.0, "b": 105.0}, noise=0.001)
    rounds, speedups = run_rounds(["ref", "a", "b"], "ref", gpu.timer, gpu.sampler, launches=7)
    assert len(rounds) == 20
    assert [r.order for r in rounds[:4]] == [["ref", "a", "b"], ["a", "b", "ref"], ["b", "ref", "a"], ["ref", "a", "b"]]
    assert all(len(times) == 7 for r in rounds for times in r.us.values())
    assert [c[0] for c in gpu.calls[:6]] == ["ref", "a", "b", "a", "b", "ref"]
    assert {c[1] for c in gpu.calls} == {7}  # a fixed number of launches per member per round
    assert all(set(r.clocks) == {"ref", "a", "b"} for r in rounds)
    assert set(speedups) == {"a", "b"}  # the reference has none


def test_a_known_5_percent_speedup_under_2_percent_noise_is_faster() -> None:
    gpu = FakeGpu({"ref": 100.0, "ours": 100.0 / 1.05}, noise=0.02)
    rounds, speedups = run_rounds(["ref", "ours"], "ref", gpu.timer, gpu.sampler, launches=1)
    s = speedups["ours"]
    assert len(rounds) == 20 and s.rounds == 20
    assert s.low > 1.0 and s.low < 1.05 < s.high
    assert s.point == pytest.approx(1.05, rel=0.02)
    assert s.verdict == "faster"


def test_identical_members_give_an_interval_holding_one() -> None:
    gpu = FakeGpu({"ref": 100.0, "twin": 100.0}, noise=0.02, seed=3)
    _, speedups = run_rounds(["ref", "twin"], "ref", gpu.timer, gpu.sampler, launches=1)
    s = speedups["twin"]
    assert s.low <= 1.0 <= s.high and s.verdict == "on par"


def test_pairing_cancels_clock_drift_between_rounds() -> None:
    # The GPU slows by 40 % over the run; per-round ratios still see the true 1.05.
    gpu = FakeGpu({"ref": 100.0, "ours": 100.0 / 1.05}, noise=0.002, drift=0.01)
    _, speedups = run_rounds(["ref", "ours"], "ref", gpu.timer, gpu.sampler, launches=5)
    assert speedups["ours"].point == pytest.approx(1.05, rel=0.01) and speedups["ours"].verdict == "faster"


def test_wide_intervals_add_rounds_up_to_the_bound_then_say_inconclusive() -> None:
    gpu = FakeGpu({"ref": 100.0, "noisy": 100.0}, noise=0.25, seed=5)
    rounds, speedups = run_rounds(["ref", "noisy"], "ref", gpu.timer, gpu.sampler, launches=1, rounds=20, max_rounds=40)
    assert len(rounds) == 40
    assert speedups["noisy"].half_width > 0.03 and speedups["noisy"].verdict == "inconclusive"


@pytest.mark.parametrize(
    ("point", "low", "high", "expected"),
    [
        (1.05, 1.02, 1.08, "faster"),
        (0.95, 0.93, 0.97, "slower"),
        (1.01, 0.99, 1.03, "on par"),
        (1.00, 1.00, 1.02, "on par"),  # the lower bound must be *above* 1
        (1.20, 1.10, 1.30, "inconclusive"),  # ±8 %: more rounds were needed, whatever the sign
    ],
)
def test_verdict_rule(point: float, low: float, high: float, expected: str) -> None:
    assert verdict(point, low, high) == expected


def test_a_target_needs_the_point_and_a_narrow_interval() -> None:
    assert target_met(Speedup(1.10, 1.08, 1.12, 20), 1.1)
    assert not target_met(Speedup(1.09, 1.07, 1.11, 20), 1.1)  # point below the target
    assert not target_met(Speedup(1.20, 1.10, 1.30, 20), 1.1)  # interval wider than ±3 %
    assert Speedup(1.02, 0.99, 1.05, 20).text() == "1.02× (0.99–1.05, on par)"


def test_paired_speedup_is_seeded_and_checks_its_input() -> None:
    ref, mem = [100.0, 101.0, 99.0, 100.5], [95.0, 96.5, 94.0, 95.2]
    assert paired_speedup(ref, mem) == paired_speedup(ref, mem)
    with pytest.raises(ValueError, match="equally long"):
        paired_speedup(ref, mem[:3])
    with pytest.raises(ValueError, match="positive"):
        paired_speedup(ref, [0.0, 1.0, 1.0, 1.0])


def test_a_group_declaration_is_checked() -> None:
    with pytest.raises(EvidenceError, match="reference 'nope' is not one of its members"):
        Group("g", "d", "nope", (Member("a"), Member("b")), ("n8-float32",))
    with pytest.raises(EvidenceError, match="distinct names"):
        Group("g", "d", "a", (Member("a"), Member("a")), ("n8-float32",))
    with pytest.raises(EvidenceError, match=">= 20 rounds"):
        Group("g", "d", "a", (Member("a"), Member("b")), ("n8-float32",), rounds=10)
    with pytest.raises(EvidenceError, match="must look like"):
        Group("g", "d", "a", (Member("a"), Member("b")), ("n8",))
    fp8 = Group("g", "d", "a", (Member("a"), Member("b", dtype="float8_e4m3fn")), ("m64-n64-k64-bfloat16",))
    assert fp8.member_config(fp8.member("b"), "m64-n64-k64-bfloat16") == "m64-n64-k64-float8_e4m3fn"


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g.name)
def test_declared_groups_name_registered_kernels_that_take_their_shapes(group: Group) -> None:
    from mla_var3.evidence.model import parse_shape_key
    from mla_var3.kernel.registry import get_plan

    for config in group.shapes:
        for m in group.members:
            shape, dtype = parse_shape_key(group.member_config(m, config))
            plan = get_plan(m.kernel)(dtype)  # raises for a dtype the kernel lacks
            plan.check_shape(shape)


def test_a_gpu_with_torchs_version_object_parses_as_a_group_device() -> None:
    """The group process parses ``GpuInfo.to_dict()`` without a JSON round trip; torch's
    ``__version__`` is a ``str`` subclass, which the strict model refused on the H200."""
    from mla_var3.evidence.model import Device
    from mla_var3.evidence.typed import parse
    from mla_var3.kernel.device import GpuInfo

    class TorchVersion(str):
        pass

    gpu = GpuInfo("NVIDIA H200", (9, 0), "GPU-0", 132, 60 << 20, "580.0", "13.0", TorchVersion("2.11.0"))
    device = parse(Device, gpu.to_dict(), "this GPU")
    assert device.torch == "2.11.0" and type(device.torch) is str
