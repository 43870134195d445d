"""Time a comparison group's members in one process, interleaved in rounds (the group harness).

:func:`run_rounds` is the schedule, free of CUDA so tests drive it with fake kernels: each
round times every member for the same number of launches, in an order rotated by one each
round, and takes an NVML sample right after each member's launches. After the planned rounds
it computes every member's speedup against the reference (:mod:`mla_var3.evidence.stats`);
while an interval is wider than ±3 % it adds rounds, up to the group's bound.

:func:`time_group` is the thin CUDA part that ``python -m mla_var3.evidence group-run`` runs in
its own process: compile each member (cached), build its rotating input sets (cold L2, as a
single kernel's timing does; a member declared ``l2="warm"`` gets one set, touched by an untimed
launch before each batch of timed ones, and its timing's method and the record's notes say so),
warm every member up, run the rounds, then measure the ceilings per dtype in the same process.
Correctness is not checked here: ``verify`` checks each member in its own subprocess first, so a
crash names the member.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mla_var3.evidence.groups import Group
from mla_var3.evidence.model import Analysis, Device, GroupRound, parse_shape_key
from mla_var3.evidence.stats import MAX_HALF_WIDTH, Speedup, paired_speedup
from mla_var3.evidence.typed import parse
from mla_var3.kernel.bench import TIMING_METHOD, ClockSample, Timing, summarize
from mla_var3.profile.roofline import Ceiling

# timer(member, launches, first_set) -> per-launch times in us
Timer = Callable[[str, int, int], list[float]]
ROUNDS_ADDED = 10


@dataclass(frozen=True)
class MemberTiming:
    """What the group process measured and compiled for one member."""

    member: str
    arch: str
    backend: str
    tuning: dict[str, Any]
    data: str
    flops: int
    bytes: int
    input_sets: int
    timing: Timing
    analysis: Analysis | None = None
    speedup: Speedup | None = None


@dataclass(frozen=True)
class GroupRun:
    """The output of one group process (the parent adds correctness and provenance)."""

    group: str
    config: str
    reference: str
    device: Device
    launches_per_round: int
    members: list[MemberTiming]
    rounds: list[GroupRound]
    ceilings: list[Ceiling]
    notes: list[str]


def rotated(names: Sequence[str], round_index: int) -> list[str]:
    k = round_index % len(names)
    return [*names[k:], *names[:k]]


def round_medians(rounds: Sequence[GroupRound], member: str) -> list[float]:
    return [float(np.median(r.us[member])) for r in rounds]


def speedups(rounds: Sequence[GroupRound], reference: str, members: Sequence[str]) -> dict[str, Speedup]:
    ref = round_medians(rounds, reference)
    return {m: paired_speedup(ref, round_medians(rounds, m)) for m in members if m != reference}


def run_rounds(
    members: Sequence[str],
    reference: str,
    timer: Timer,
    sampler: Callable[[], ClockSample],
    launches: int,
    rounds: int = 20,
    max_rounds: int = 60,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[list[GroupRound], dict[str, Speedup]]:
    """Rounds of ``launches`` timed launches per member, order rotated each round; adds rounds
    (by :data:`ROUNDS_ADDED`, up to ``max_rounds``) while a speedup's half-width exceeds 3 %."""
    done: list[GroupRound] = []
    target = rounds
    while True:
        while len(done) < target:
            i = len(done)
            us: dict[str, list[float]] = {}
            clocks: dict[str, ClockSample] = {}
            order = rotated(members, i)
            for name in order:
                us[name] = timer(name, launches, i * launches)
                clocks[name] = sampler()
            done.append(GroupRound(order, us, clocks))
        result = speedups(done, reference, members)
        wide = [m for m, s in result.items() if s.half_width > MAX_HALF_WIDTH]
        if not wide or target >= max_rounds:
            return done, result
        progress(f"{', '.join(wide)}: interval wider than ±{MAX_HALF_WIDTH:.0%} after {target} rounds; adding rounds")
        target = min(max_rounds, target + ROUNDS_ADDED)


def member_timing(
    rounds: Sequence[GroupRound], member: str, warmup: int, input_sets: int, method: str = TIMING_METHOD
) -> Timing:
    """Median, p10, p90 over every launch of ``member`` in every round."""
    return summarize([t for r in rounds for t in r.us[member]], warmup, input_sets, method)


def time_group(group: Group, config: str, progress: Callable[[str], None] = print) -> GroupRun:
    """Compile, warm up and time every member of ``group`` at ``config`` on this GPU (the CUDA part)."""
    import torch

    from mla_var3.kernel.bench import (
        WARM_L2,
        WARM_L2_METHOD,
        event_times_us,
        input_sets_for_l2,
        measure_ceilings,
        nvml_sample,
        warm_up,
    )
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.device import detect_gpu
    from mla_var3.kernel.errors import NoGpuError
    from mla_var3.kernel.registry import get_plan
    from mla_var3.kernel.runner import choose_target

    gpu = detect_gpu()
    if gpu is None:
        raise NoGpuError(f"group {group.name} is timed on a GPU; none found")
    launchers: dict[str, Callable[[int], None]] = {}
    prepared: dict[str, dict[str, Any]] = {}
    for m in group.members:
        member_config = group.member_config(m, config)
        plan_cls = get_plan(m.kernel)
        shape, dtype = parse_shape_key(member_config)
        plan = plan_cls(dtype)
        plan.check_shape(shape)
        arch, mode, reason = choose_target(plan_cls, None, False, gpu)
        if mode != "run":
            raise NoGpuError(f"group {group.name}: member {m.id} cannot run here ({reason})")
        tuning = plan.default_config()
        compiled = compile_cached(plan, tuning, shape, arch)
        kernel = plan.plan(tuning)
        inputs = plan.prepare_inputs(shape)
        outputs = plan.allocate_outputs(inputs, shape)
        set_bytes = sum(t.numel() * t.element_size() for t in (*inputs.values(), *outputs.values()))
        sets = input_sets_for_l2(m.l2, set_bytes, gpu.l2_bytes)
        rotation = [(inputs, outputs)] + [
            (plan.prepare_inputs(shape), plan.allocate_outputs(inputs, shape)) for _ in range(sets - 1)
        ]
        bound = [kernel.bind(compiled.compiled, *io) for io in rotation]
        launchers[m.id] = lambda i, bound=bound: bound[i]()
        flops, nbytes = plan._algorithmic_flops_bytes(shape)
        analysis = compiled.analysis_dict()
        prepared[m.id] = {
            "arch": arch.name, "backend": plan.backend, "tuning": tuning, "flops": flops, "bytes": nbytes, "input_sets": sets,
            "data": plan.data_distribution,
            "analysis": parse(Analysis, analysis, f"{group.name}/{m.id}") if analysis else None,
        }  # fmt: skip
    host_per_launch: dict[str, float] = {}
    warmup: dict[str, int] = {}
    for m in group.members:  # every member warm, then the clocks settle under the load of all of them
        warmup[m.id], host_per_launch[m.id] = warm_up(launchers[m.id], prepared[m.id]["input_sets"], 5, 0.3)
    torch.cuda.synchronize()

    warm = [m.id for m in group.members if m.l2 == WARM_L2]
    notes = [f"member {i} timed with a warm L2: one input set, touched by an untimed launch before its launches of each round"
             for i in warm]  # fmt: skip

    def timer(member: str, launches: int, first: int) -> list[float]:
        sets = prepared[member]["input_sets"]
        if member in warm:  # the other members' launches evicted it: bring the set back into L2, untimed
            launchers[member](0)
        return event_times_us(launchers[member], sets, launches, host_per_launch[member], first)

    ids = [m.id for m in group.members]
    rounds, result = run_rounds(
        ids, group.reference, timer, lambda: nvml_sample(gpu.uuid), group.launches_per_round,
        group.rounds, group.max_rounds, progress,
    )  # fmt: skip
    ceilings = measure_ceilings()
    members = [
        MemberTiming(
            member=i, speedup=result.get(i), **prepared[i],
            timing=member_timing(rounds, i, warmup[i], prepared[i]["input_sets"],
                                 WARM_L2_METHOD if i in warm else TIMING_METHOD),
        )
        for i in ids
    ]  # fmt: skip
    device = parse(Device, gpu.to_dict(), "this GPU")
    return GroupRun(group.name, config, group.reference, device, group.launches_per_round, members, rounds, ceilings, notes)
