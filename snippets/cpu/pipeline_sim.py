"""A producer/consumer mbarrier pipeline, simulated on a CPU: the DSL's own stage/phase walk plus a
small model of the barriers, drawn as a timeline (and, with a wrong setting, the hang it causes).

``pipeline_states`` compiles a ``@cute.jit`` host function that advances the DSL's real
``cutlass.pipeline`` producer and consumer states and runs it *on the CPU* (a host function with
no kernel needs no GPU), writing each step's index and phase into a CPU tensor. ``simulate`` plays
a TMA producer and an MMA consumer against a model of the full and empty mbarriers, using those
indices and phases, and ``timeline_svg`` draws it. ``simulate`` stops at a deadlock and says who
waits on which barrier, for which phase, and what the barrier still expects.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import torch
from cutlass.cute.runtime import from_dlpack

from mla_var3.knowledge.expected import program_name_only


# --8<-- [start:states]
@cute.jit
def walk_states(stages: cutlass.Constexpr, out: cute.Tensor):
    """Row k of ``out``: producer index, phase, then consumer index, phase, at the k-th step."""
    producer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, stages)
    consumer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, stages)
    for k in range(cute.size(out, mode=[0])):
        out[k, 0] = producer.index
        out[k, 1] = producer.phase
        out[k, 2] = consumer.index
        out[k, 3] = consumer.phase
        producer.advance()
        consumer.advance()
# --8<-- [end:states]


def pipeline_states(stages: int, steps: int) -> list[tuple[int, int, int, int]]:
    """The DSL's producer/consumer (index, phase) per step, computed by running its code on the CPU."""
    out = torch.zeros(steps, 4, dtype=torch.int32)
    with program_name_only():
        compiled = cute.compile(walk_states, stages, from_dlpack(out))
    compiled(from_dlpack(out))
    return [tuple(row) for row in out.tolist()]  # type: ignore[misc]


def state_table(stages: int = 3, steps: int = 8) -> str:
    rows = ["| step k | producer index | producer phase | consumer index | consumer phase |", "|---|---|---|---|---|"]
    rows += [f"| {k} | {pi} | {pp} | {ci} | {cp} |" for k, (pi, pp, ci, cp) in enumerate(pipeline_states(stages, steps))]
    return "\n".join(rows)


# --8<-- [start:mbarrier]
@dataclass
class MBarrier:
    """What an mbarrier holds: the phase in progress, the arrivals and transaction bytes it still waits for.

    A phase completes when both reach zero; then the phase flips and the counts re-arm. ``wait(parity)``
    passes once the phase with that parity has completed -- on a fresh barrier (phase 0 in progress)
    waiting for parity 1 passes at once, which is why producers start with phase 1.
    """

    name: str
    arrivals: int  # expected arrivals per phase
    phase: int = 0
    pending: int = field(init=False)
    tx_bytes: int = 0  # transaction bytes still expected in this phase

    def __post_init__(self) -> None:
        self.pending = self.arrivals

    def arrive(self, expect_tx: int = 0) -> None:
        self.tx_bytes += expect_tx
        self.pending -= 1
        self._maybe_complete()

    def complete_tx(self, nbytes: int) -> None:  # the TMA unit, as the bytes land in SMEM
        self.tx_bytes -= nbytes
        self._maybe_complete()

    def passed(self, parity: int) -> bool:
        return self.phase != parity

    def _maybe_complete(self) -> None:
        if self.pending == 0 and self.tx_bytes == 0:
            self.phase ^= 1
            self.pending = self.arrivals
# --8<-- [end:mbarrier]


@dataclass(frozen=True)
class Setup:
    """One pipeline: stages, K tiles, durations in time units, and what the barriers are told."""

    stages: int = 3
    k_tiles: int = 8
    load_time: int = 5  # a stage's TMA, issue to last byte
    mma_time: int = 3  # the consumer's work on one stage
    stage_bytes: int = 32768  # what the full barrier expects per stage (tx count)
    loaded_bytes: int = 32768  # what the copies really bring
    consumers: int = 1  # consumer arrivals per release (one per warpgroup here)
    empty_arrivals: int = 1  # what the empty barrier was created to expect
    copies: int = 1  # TMA copies per stage (A and B: 2), landing one time unit apart, the last at load_time


@dataclass
class Span:
    lane: str
    label: str
    kind: str  # "wait", "issue", "load" (bytes in flight), "held" (landed, until released), "mma"
    start: int
    end: int


@dataclass(frozen=True)
class EarlyRead:
    """The consumer passed a stage's full barrier before all of the tile's bytes had landed."""

    k: int
    stage: int
    time: int
    landed_bytes: int
    tile_bytes: int


@dataclass
class Run:
    spans: list[Span]
    deadlock: str | None  # who waits for what, if the run could not finish
    early: list[EarlyRead] = field(default_factory=list)  # tiles read before their bytes landed
    completions: list[EarlyRead] = field(default_factory=list)  # full-barrier phases completed before their tile landed


# --8<-- [start:roles]
def _producer(s: Setup, states: list[tuple[int, ...]]) -> Iterator[tuple]:
    for k in range(s.k_tiles):
        index, phase = states[k][0], states[k][1]
        yield ("wait", "empty", index, phase)  # producer_acquire: wait until stage `index` is free ...
        yield ("arm", index, s.stage_bytes)  # ... and arm full[index] with the bytes to expect
        yield ("issue", index, k)  # the TMA copies, signalling full[index] as bytes land


def _consumer(s: Setup, states: list[tuple[int, ...]]) -> Iterator[tuple]:
    for k in range(s.k_tiles):
        index, phase = states[k][2], states[k][3]
        yield ("wait", "full", index, phase)  # consumer_wait: until stage `index` holds tile k
        yield ("mma", index, k)  # the MMAs read the stage
        yield ("release", index, k)  # consumer_release: arrive on empty[index]
# --8<-- [end:roles]


def simulate(s: Setup) -> Run:
    """Play both roles in unit time steps until they finish, or until neither can move (a hang)."""
    states = pipeline_states(s.stages, s.k_tiles)
    barriers = {"full": [MBarrier(f"full[{i}]", arrivals=1) for i in range(s.stages)],
                "empty": [MBarrier(f"empty[{i}]", arrivals=s.empty_arrivals) for i in range(s.stages)]}  # fmt: skip
    roles = {"producer": _producer(s, states), "consumer": _consumer(s, states)}
    current: dict[str, tuple | None] = {name: next(gen) for name, gen in roles.items()}
    ready = {name: 0 for name in roles}  # when each role may take its next step
    since = {name: 0 for name in roles}  # when its current wait began
    landing: list[tuple[int, int, int, int]] = []  # (time a copy lands, stage, k, bytes), one per copy
    landed_bytes: dict[int, int] = {}  # k -> bytes of tile k landed so far
    landed: dict[int, int] = {}  # k -> time the last byte of tile k landed
    consumed = 0  # tiles the consumer has passed its full-barrier wait for
    early: list[EarlyRead] = []
    completions: list[EarlyRead] = []
    fills = [0] * s.stages  # full-barrier phases completed per stage: the n-th is for tile stage + n * stages

    def track(stage: int, before: int) -> None:  # record a full-barrier completion that left its tile short
        if barriers["full"][stage].phase != before:
            k = stage + fills[stage] * s.stages
            fills[stage] += 1
            if landed_bytes.get(k, 0) < s.loaded_bytes:
                completions.append(EarlyRead(k, stage, t, landed_bytes.get(k, 0), s.loaded_bytes))

    spans: list[Span] = []
    t = 0
    while any(step is not None for step in current.values()):
        for event in [e for e in landing if e[0] == t]:  # each copy's complete-tx, as its bytes land
            _, stage, k, nbytes = event
            landing.remove(event)
            before = barriers["full"][stage].phase
            landed_bytes[k] = landed_bytes.get(k, 0) + nbytes
            barriers["full"][stage].complete_tx(nbytes)
            track(stage, before)
            if landed_bytes[k] == s.loaded_bytes:
                spans.append(Span(f"stage {stage}", f"k={k}", "load", t - s.load_time, t))
                landed[k] = t
        moved = False
        for name, gen in roles.items():
            while (step := current[name]) is not None and ready[name] <= t:
                kind = step[0]
                if kind == "wait":
                    barrier = barriers[step[1]][step[2]]
                    if not barrier.passed(step[3]):
                        break
                    if step[1] == "full":
                        if landed_bytes.get(consumed, 0) < s.loaded_bytes:
                            early.append(EarlyRead(consumed, step[2], t, landed_bytes.get(consumed, 0), s.loaded_bytes))
                        consumed += 1
                    if t > since[name]:
                        spans.append(Span(name, f"{barrier.name} ph{step[3]}", "wait", since[name], t))
                elif kind == "arm":
                    before = barriers["full"][step[1]].phase
                    barriers["full"][step[1]].arrive(expect_tx=step[2])
                    track(step[1], before)
                elif kind == "issue":
                    spans.append(Span(name, f"k={step[2]}", "issue", t, t + 1))
                    per_copy = s.loaded_bytes // s.copies
                    landing += [(t + s.load_time - (s.copies - 1 - c), step[1], step[2], per_copy) for c in range(s.copies)]
                    ready[name] = t + 1
                elif kind == "mma":
                    spans.append(Span(name, f"k={step[2]}", "mma", t, t + s.mma_time))
                    ready[name] = t + s.mma_time
                else:  # release
                    spans.append(Span(f"stage {step[1]}", f"k={step[2]}", "held", min(landed.get(step[2], t), t), t))
                    for _ in range(s.consumers):
                        barriers["empty"][step[1]].arrive()
                current[name] = next(gen, None)
                since[name] = max(t, ready[name])
                moved = True
        if not moved and not landing and all(step is None or ready[n] <= t for n, step in current.items()):
            return Run(spans, _deadlock(current, barriers, t), early, completions)
        t += 1
    return Run(spans, None, early, completions)


def _deadlock(current: dict[str, tuple | None], barriers: dict[str, list[MBarrier]], t: int) -> str:
    lines = [f"no progress after t = {t}:"]
    for name, step in current.items():
        if step is not None:
            barrier = barriers[step[1]][step[2]]
            lines.append(f"  {name} waits on {barrier.name} for phase {step[3]} to complete; {barrier.name} is in phase "
                         f"{barrier.phase}, still expecting {barrier.pending} arrival(s) and {barrier.tx_bytes} transaction byte(s)")  # fmt: skip
    return "\n".join(lines)


COLORS = {"wait": "#bab0ac", "issue": "#4c78a8", "load": "#9ecae9", "held": "#a1d99b", "mma": "#31a354"}


def timeline_svg(run: Run, title: str) -> str:
    """Lanes for producer and consumer; each span labelled and coloured by kind (wait, load, MMA)."""
    lanes = ["producer", *sorted({sp.lane for sp in run.spans if sp.lane.startswith("stage")}), "consumer"]
    end = max((sp.end for sp in run.spans), default=1)
    unit, left, lane_h, top = 26, 80, 30, 30
    width = left + end * unit + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {top + len(lanes) * (lane_h + 8) + 30}" width="100%" '
           f'style="max-width:{width}px" font-family="sans-serif" font-size="10" role="img" aria-label="{escape(title)}">',
           f'<text x="{left}" y="16" font-size="13" fill="currentColor">{escape(title)}</text>']  # fmt: skip
    for i, lane in enumerate(lanes):
        y = top + i * (lane_h + 8)
        out.append(f'<text x="{left - 6}" y="{y + lane_h / 2 + 4}" text-anchor="end" fill="currentColor">{lane}</text>')
        for sp in (sp for sp in run.spans if sp.lane == lane):
            x, w = left + sp.start * unit, (sp.end - sp.start) * unit
            out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{lane_h}" fill="{COLORS[sp.kind]}" stroke="#fff">'
                       f"<title>{escape(sp.label)} [{sp.start}, {sp.end})</title></rect>")  # fmt: skip
            if w >= 6 * len(sp.label) + 4:  # label a span only where it fits (all have a tooltip)
                out.append(f'<text x="{x + w / 2}" y="{y + lane_h / 2 + 4}" text-anchor="middle">{escape(sp.label)}</text>')
    axis = top + len(lanes) * (lane_h + 8) + 12
    for t in range(0, end + 1, 5):
        out.append(f'<text x="{left + t * unit}" y="{axis}" text-anchor="middle" fill="currentColor">{t}</text>')
    out.append("</svg>")
    return "".join(out)


def healthy_picture() -> str:
    s = Setup()
    return timeline_svg(simulate(s), f"{s.stages} stages, {s.k_tiles} K tiles: load {s.load_time}, MMA {s.mma_time} time units")


def hang_report(case: str) -> str:
    """The simulated hang of a misconfigured pipeline: ``tx`` (wrong transaction bytes) or ``arrivals``."""
    setups = {"tx": Setup(loaded_bytes=16384), "arrivals": Setup(empty_arrivals=2)}
    run = simulate(setups[case])
    assert run.deadlock is not None, f"the {case} setup was expected to hang"
    return f"```text\n{run.deadlock}\n```"


# --8<-- [start:short_tx]
SHORT_TX = Setup(copies=2, stage_bytes=16384, loaded_bytes=32768)  # armed for A's bytes only, B forgotten


def short_tx_report(s: Setup = SHORT_TX) -> str:
    """What the simulated pipeline does when each stage's full barrier expects fewer bytes than its copies bring."""
    run = simulate(s)
    lines = [f"{s.copies} copies of {s.loaded_bytes // s.copies} bytes per stage, full barrier armed for {s.stage_bytes}:"]
    lines += [f"  t = {c.time}: full[{c.stage}] completes the phase of tile k={c.k} with {c.landed_bytes} of its "
              f"{c.tile_bytes} bytes landed" + ("; the consumer, waiting, reads it now" if c in run.early else "")
              for c in run.completions]  # fmt: skip
    lines.append(run.deadlock or "  the run finishes: no hang, and nothing reports the tiles read early")
    return "\n".join(lines)
# --8<-- [end:short_tx]


def short_tx_picture() -> str:
    s = SHORT_TX
    return timeline_svg(simulate(s), f"full barriers armed for {s.stage_bytes} of {s.loaded_bytes} bytes per stage")
