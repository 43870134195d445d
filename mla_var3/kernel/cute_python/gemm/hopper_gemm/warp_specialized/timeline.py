"""In-kernel timeline of ``hopper_gemm_ws``: the instrumented variant, one run of it, its spans.

:class:`TimelineHopperGemmWS` is the kernel of ``kernel.py`` with probes attached through the
kernel's two seams, so the taught code carries none: ``_attach_probes`` hands the warp roles a
:class:`TimedPipeline` (the same ``PipelineTmaAsync``, whose barrier waits and releases record
themselves), and ``_store_tile`` is bracketed. The first thread of each warpgroup records
(role = warpgroup: ``producer``, ``consumer0``, ``consumer1``), for the first ``ctas`` CTAs
(:mod:`mla_var3.profile.timeline_device`):

- producer: ``empty_wait`` (``producer_acquire``), ``tail`` (an instant at ``producer_tail``);
- consumers: ``full_wait`` (``consumer_wait``), ``release`` (an instant at each
  ``consumer_release``), ``epilogue`` (``_store_tile``, by the consumer's tile count).

``seq`` is the CTA's running K-step count on every role, so the producer's stage ``seq`` pairs
with the consumers' ``full_wait`` of the same ``seq``. :func:`derive_spans` turns the records
into the spans a page draws: ``tma_issue[k]`` from the end of ``empty_wait[k]`` to the
producer's next record (issuing stage k's loads); ``mma[k]`` from the end of ``full_wait[k]``
to the next release or ``full_wait``, whichever comes first (the K tile's WGMMAs until at
most one batch is in flight; a tile's last K step until all are done); the ``epilogue`` under
its tile's last K step. Only the first ``capacity`` K steps of each CTA are kept.

With ``layout=None`` the probes compile to nothing: the cubin is ``kernel.py``'s, byte for
byte (``tests/test_hopper_timeline.py`` checks it). ``record_timeline`` needs an sm_90 GPU;
:func:`compile_instrumented` runs anywhere.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    EPI_TILE_N,
    WARPGROUP_THREADS,
    Epilogue,
    HopperGemmWS,
)
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import (
    COMPILE_SM_COUNT,
    HopperGemmWSPlan,
    compile_operands,
    gemm_kwargs,
    launch_operands,
    max_active_clusters,
)
from mla_var3.kernel.plan import Config, Shape
from mla_var3.kernel.tensors import fake_tensor, to_cute
from mla_var3.profile.errors import ProfileError
from mla_var3.profile.timeline import Span, TimelineLayout, decode_timeline
from mla_var3.profile.timeline_device import timeline_begin, timeline_end

if TYPE_CHECKING:
    from mla_var3.profile.timeline import Timeline

TIMELINE_ROLES = ("producer", "consumer0", "consumer1")
# What the device records, and what derive_spans makes of it.
PROBE_EVENTS = ("empty_wait", "full_wait", "release", "tail", "epilogue")
TIMELINE_EVENTS = ("empty_wait", "tma_issue", "full_wait", "mma", "epilogue")
DEFAULT_CAPACITY = 48  # K steps per CTA: enough to see the steady state, small enough for a page


@dataclass(frozen=True)
class Probes:
    """Where the records go: the layout (``None``: probes compiled out), the buffer and how many
    warpgroup roles the config has. Frozen, like the DSL's pipelines: the DSL's loops carry
    read-only frozen dataclasses through as they are."""

    layout: TimelineLayout | None
    buf: cute.Tensor | None
    roles: int

    def now(self) -> cutlass.Int64:
        return timeline_begin(self.layout)

    @cute.jit
    def record(self, event: cutlass.Constexpr, seq: cutlass.Int32, start: cutlass.Int64) -> None:
        """``[start, now)`` as ``event`` at step ``seq``, by the first thread of the warpgroup."""
        if cutlass.const_expr(self.layout is not None):
            tidx, _, _ = cute.arch.thread_idx()
            if tidx % WARPGROUP_THREADS == 0:
                role = tidx // WARPGROUP_THREADS
                # timeline_end takes the role by name (a compile-time string): pick it here.
                for r in cutlass.range_constexpr(self.roles):
                    if role == r:
                        timeline_end(self.buf, self.layout, TIMELINE_ROLES[r], event, seq, start)


@dataclass(frozen=True)
class TimedPipeline:
    """A ``PipelineTmaAsync`` whose barrier waits and releases record themselves."""

    inner: pipeline.PipelineTmaAsync
    probes: Probes

    def producer_acquire(self, state: pipeline.PipelineState) -> None:
        start = self.probes.now()
        self.inner.producer_acquire(state)
        self.probes.record("empty_wait", state.count, start)

    def producer_get_barrier(self, state: pipeline.PipelineState) -> Any:
        return self.inner.producer_get_barrier(state)

    def producer_tail(self, state: pipeline.PipelineState) -> None:
        self.probes.record("tail", state.count - 1, self.probes.now())
        self.inner.producer_tail(state)

    def consumer_wait(self, state: pipeline.PipelineState) -> None:
        start = self.probes.now()
        self.inner.consumer_wait(state)
        self.probes.record("full_wait", state.count, start)

    def consumer_release(self, state: pipeline.PipelineState) -> None:
        self.probes.record("release", state.count, self.probes.now())
        self.inner.consumer_release(state)


class TimelineHopperGemmWS(HopperGemmWS):
    """``HopperGemmWS`` recording its timeline into ``timeline_buf`` (``layout=None``: no probes)."""

    def __init__(self, layout: TimelineLayout | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.layout = layout
        self.records_timeline = layout is not None
        if layout is not None:
            needed = (*TIMELINE_ROLES[: 1 + self.consumer_wgs], *PROBE_EVENTS)
            missing = [n for n in needed if n not in (*layout.roles, *layout.events)]
            if missing:
                raise ValueError(f"the timeline layout lacks {missing} (this config records {needed})")

    def _attach_probes(self, ab_pipeline: pipeline.PipelineTmaAsync, timeline_buf: cute.Tensor | None) -> Any:
        self.probes = Probes(self.layout, timeline_buf, 1 + self.consumer_wgs)
        return TimedPipeline(ab_pipeline, self.probes)

    @cute.jit
    def _store_tile(
        self, epi: Epilogue, m_tile: cutlass.Int32, n_tile: cutlass.Int32, stored: cutlass.Int32
    ) -> cutlass.Int32:
        start = self.probes.now()
        after = HopperGemmWS._store_tile(self, epi, m_tile, n_tile, stored)
        self.probes.record("epilogue", stored // (self.tile_mnk[1] // EPI_TILE_N), start)
        return after


# --- host side -----------------------------------------------------------------------------
def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def k_steps_per_cta(shape: Shape, config: Config, max_clusters: int) -> int:
    """K steps of the busiest CTA: its cluster's share of cluster tiles times the K tiles."""
    (tile_m, tile_n), (cm, cn) = config["tile_mn"], config["cluster_mn"]
    cluster_tiles = _ceil_div(_ceil_div(shape["m"], tile_m), cm) * _ceil_div(_ceil_div(shape["n"], tile_n), cn)
    return _ceil_div(cluster_tiles, min(cluster_tiles, max_clusters)) * _ceil_div(shape["k"], 64)


def probe_layout(ctas: int, capacity: int) -> TimelineLayout:
    """What the device records: one slot more than ``capacity`` K steps, so the last kept step's
    spans have an end."""
    return TimelineLayout(TIMELINE_ROLES, PROBE_EVENTS, ctas=ctas, capacity=capacity + 1)


def timeline_layout(ctas: int = 4, capacity: int = DEFAULT_CAPACITY) -> TimelineLayout:
    """The lanes and events of the derived timeline (what a record keeps and a page draws)."""
    return TimelineLayout(TIMELINE_ROLES, TIMELINE_EVENTS, ctas=ctas, capacity=capacity)


def _next_start(starts: list[int], after: int) -> int | None:
    i = bisect.bisect_left(starts, after)
    return starts[i] if i < len(starts) else None


def derive_spans(recorded: Sequence[Span], capacity: int) -> list[Span]:
    """The timeline's spans (``TIMELINE_EVENTS``) from the device's records (``PROBE_EVENTS``)."""
    lanes: dict[tuple[int, str], dict[str, list[Span]]] = defaultdict(lambda: defaultdict(list))
    for s in sorted(recorded, key=lambda s: (s.start, s.end)):
        lanes[(s.cta, s.role)][s.event].append(s)
    out: list[Span] = []
    for (cta, role), events in lanes.items():
        if role == "producer":
            waits = events["empty_wait"]
            marks = sorted(s.start for s in (*waits, *events["tail"]))
            for w in waits:
                end = _next_start(marks, w.end)
                out.append(w)
                if end is not None:
                    out.append(Span(cta, role, "tma_issue", w.seq, w.end, end))
            continue
        waits = events["full_wait"]
        wait_starts = [w.start for w in waits]
        releases = [r.start for r in events["release"]]
        for w in waits:
            ends = [t for t in (_next_start(releases, w.end), _next_start(wait_starts, w.end)) if t is not None]
            out.append(w)
            if ends:
                out.append(Span(cta, role, "mma", w.seq, w.end, min(ends)))
        for e in events["epilogue"]:
            before = [w for w in waits if w.start <= e.start]
            if before:
                out.append(Span(cta, role, "epilogue", before[-1].seq, e.start, e.end))
    kept = [s for s in out if s.seq < capacity]
    return sorted(kept, key=lambda s: (s.cta, s.start, s.end))


def compile_instrumented(
    config: Config,
    layout: TimelineLayout | None,
    dtype: str = "bfloat16",
    options: str = "--gpu-arch sm_90a",
) -> Any:
    """The kernel with its probes (``layout=None``: stubbed), tensor-free like the plan's binary.
    Call it as ``fn(a, b, c, max_clusters, stream[, timeline_buf])``."""
    import cuda.bindings.driver as cuda

    gemm = TimelineHopperGemmWS(layout, **gemm_kwargs(config))
    args: list[Any] = [*compile_operands(dtype), COMPILE_SM_COUNT // (gemm.cluster_mn[0] * gemm.cluster_mn[1])]
    args.append(cuda.CUstream(0))
    if layout is not None:
        args.append(fake_tensor(cutlass.Int64, (layout.words,)))
    return cute.compile(gemm, *args, options=options)


# --8<-- [start:record_timeline]
def record_timeline(
    shape: Shape,
    config: Config,
    ctas: int = 4,
    capacity: int | None = None,
    dtype: str = "bfloat16",
) -> Timeline:
    """Run the instrumented GEMM once on this GPU (after one checked warm-up launch) and return
    its timeline. ``capacity`` (K steps kept per CTA) defaults to all, at most :data:`DEFAULT_CAPACITY`."""
    import cuda.bindings.driver as cuda
    import torch

    from mla_var3.kernel.check import compare, poison
    from mla_var3.profile.timeline import Timeline

    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        raise ProfileError(
            "the hopper_gemm_ws timeline runs sm_90a code: it needs an H100/H200 (compute capability 9.0)"
        )
    plan = HopperGemmWSPlan(dtype)
    plan.check_shape(shape)
    (tile_m, tile_n), (cm, cn) = config["tile_mn"], config["cluster_mn"]
    clusters = max_active_clusters(cm * cn, torch.cuda.current_device())
    steps = k_steps_per_cta(shape, config, clusters)
    capacity = capacity or min(steps, DEFAULT_CAPACITY)
    layout = probe_layout(ctas, capacity)
    fn = compile_instrumented(config, layout, dtype)

    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    buf = torch.zeros(layout.words, dtype=torch.int64, device="cuda")
    stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
    args = (*launch_operands(inputs["a"], inputs["b"], outputs["c"]), clusters, stream, to_cute(buf))
    poison(outputs)
    fn(*args)  # warm-up: instruction cache, TMA descriptors, L2; and proof the probes broke nothing
    check = compare(outputs, plan.reference_fn(inputs), plan.tolerance())
    if not check.passed:
        raise ProfileError(f"the instrumented hopper_gemm_ws is wrong at {shape}: {check.summary()}")
    buf.zero_()
    fn(*args)
    torch.cuda.synchronize()

    spans = derive_spans(decode_timeline(buf.cpu(), layout), capacity)
    title = (
        f"hopper_gemm_ws {shape['m']}x{shape['n']}x{shape['k']} {dtype}, tile {tile_m}x{tile_n}, cluster {cm}x{cn}, "
        f"{config['stages']} stages: K steps 0-{capacity - 1} of {steps} per CTA"
    )
    return Timeline.of(spans, timeline_layout(ctas, capacity), title)


# --8<-- [end:record_timeline]

__all__ = [
    "DEFAULT_CAPACITY",
    "PROBE_EVENTS",
    "TIMELINE_EVENTS",
    "TIMELINE_ROLES",
    "TimedPipeline",
    "TimelineHopperGemmWS",
    "compile_instrumented",
    "derive_spans",
    "k_steps_per_cta",
    "probe_layout",
    "record_timeline",
    "timeline_layout",
]
