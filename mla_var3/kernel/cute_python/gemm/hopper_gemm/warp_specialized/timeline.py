"""In-kernel timeline of ``hopper_gemm_ws``: compile the instrumented variant, run it, draw it.

The kernel built with a :class:`~mla_var3.profile.timeline.TimelineLayout` records, for the
first ``ctas`` CTAs, one lane per warp role (``producer``, ``consumer0``, ``consumer1``):
the producer's ``empty_wait`` (``producer_acquire``) and ``tma_issue``, each consumer's
``full_wait`` (``consumer_wait``), ``mma`` (WGMMA issue up to the point where at most one
batch is in flight; a tile's last K step until all are done) and ``epilogue``. ``seq`` is
the CTA's running K-step count on every role, so the producer's ``tma_issue[seq]`` pairs with
the consumers' ``full_wait[seq]`` and :func:`~mla_var3.profile.timeline.tma_overlap` can say
how much of the MMA time had loads in flight. Only the first ``capacity`` K steps of each CTA
are recorded (epilogues by their tile's last K step), so every lane covers the same window.

``record_timeline`` needs an sm_90 GPU; :func:`compile_instrumented` runs anywhere.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    TIMELINE_EVENTS,
    TIMELINE_ROLES,
)
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import (
    COMPILE_SM_COUNT,
    HopperGemmWSPlan,
    _as_gemm_operand,
    _gemm_operand,
    _sm_count,
    gemm_from_config,
)
from mla_var3.kernel.plan import Config, Shape
from mla_var3.kernel.tensors import cute_dtype, fake_tensor, to_cute
from mla_var3.profile.errors import ProfileError
from mla_var3.profile.timeline import (
    Span,
    TimelineLayout,
    TmaOverlap,
    decode_timeline,
    render_timeline_svg,
    tma_overlap,
)

# 256 K steps (two 8192-deep tiles at K tile 64) keep the SVG readable and the buffer small.
DEFAULT_CAPACITY = 48  # K steps per CTA: enough to see the steady state, small enough for a page


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def k_steps_per_cta(shape: Shape, config: Config, sm_count: int) -> int:
    """K steps of the busiest CTA: its cluster's share of cluster tiles times the K tiles."""
    (tile_m, tile_n), (cm, cn) = config["tile_mn"], config["cluster_mn"]
    cluster_tiles = _ceil_div(_ceil_div(shape["m"], tile_m), cm) * _ceil_div(
        _ceil_div(shape["n"], tile_n), cn
    )
    clusters = min(cluster_tiles, sm_count // (cm * cn))
    return _ceil_div(cluster_tiles, clusters) * _ceil_div(shape["k"], 64)


def timeline_layout(ctas: int = 4, capacity: int = DEFAULT_CAPACITY) -> TimelineLayout:
    """The layout the GEMM records into: its three roles and five events."""
    return TimelineLayout(TIMELINE_ROLES, TIMELINE_EVENTS, ctas=ctas, capacity=capacity)


def compile_instrumented(
    config: Config,
    layout: TimelineLayout,
    dtype: str = "bfloat16",
    options: str = "--gpu-arch sm_90a",
) -> Any:
    """The kernel with the timeline compiled in, tensor-free (fake tensors, like the plan's
    binary): call it as ``fn(a, b, c, max_clusters, stream, timeline_buf)``."""
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute

    ab = cute_dtype(dtype)
    gemm = gemm_from_config(config, timeline=layout)
    buf = fake_tensor(cutlass.Int64, (layout.words,))
    operands = (_gemm_operand(ab, 1), _gemm_operand(ab, 8), _gemm_operand(ab, 1))
    max_clusters = COMPILE_SM_COUNT // (gemm.cluster_mn[0] * gemm.cluster_mn[1])
    return cute.compile(gemm, *operands, max_clusters, cuda.CUstream(0), buf, options=options)


# --8<-- [start:record_timeline]
def record_timeline(
    shape: Shape,
    config: Config,
    ctas: int = 4,
    capacity: int | None = None,
    dtype: str = "bfloat16",
) -> tuple[list[Span], TmaOverlap, str]:
    """Run the instrumented GEMM once on this GPU (after one checked warm-up launch) and
    return its spans, the TMA overlap and the SVG. ``capacity`` (K steps recorded per CTA)
    defaults to all of them, at most :data:`DEFAULT_CAPACITY`."""
    import cuda.bindings.driver as cuda
    import torch

    from mla_var3.kernel.check import compare, poison

    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        raise ProfileError(
            "the hopper_gemm_ws timeline runs sm_90a code: it needs an H100/H200 (compute capability 9.0)"
        )
    plan = HopperGemmWSPlan(dtype)
    plan.validate_shape(shape)
    (tile_m, tile_n), (cm, cn) = config["tile_mn"], config["cluster_mn"]
    device = torch.cuda.current_device()
    steps = k_steps_per_cta(shape, config, _sm_count(device))
    layout = timeline_layout(ctas, capacity or min(steps, DEFAULT_CAPACITY))
    fn = compile_instrumented(config, layout, dtype)

    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    buf = torch.zeros(layout.words, dtype=torch.int64, device="cuda")
    args = (
        _as_gemm_operand(inputs["a"], 1),
        _as_gemm_operand(inputs["b"], 8),
        _as_gemm_operand(outputs["c"], 1),
        _sm_count(device) // (cm * cn),
        cuda.CUstream(torch.cuda.current_stream().cuda_stream),
        to_cute(buf),
    )
    poison(outputs)
    fn(*args)  # warm-up: instruction cache, TMA descriptors, L2; and proof the probes broke nothing
    check = compare(outputs, plan.reference_fn(inputs), plan.tolerance())
    if not check.passed:
        raise ProfileError(f"the instrumented hopper_gemm_ws is wrong at {shape}: {check.summary()}")
    buf.zero_()
    fn(*args)
    torch.cuda.synchronize()

    spans = decode_timeline(buf.cpu(), layout)
    overlap = tma_overlap(spans)
    title = (
        f"hopper_gemm_ws {shape['m']}x{shape['n']}x{shape['k']} {dtype}, tile {tile_m}x{tile_n}, cluster {cm}x{cn}, "
        f"{config['stages']} stages: K steps 0-{layout.capacity - 1} of {steps} per CTA"
    )
    svg = render_timeline_svg(spans, layout=layout, overlap=overlap, max_ctas=ctas, title=title)
    return spans, overlap, svg


# --8<-- [end:record_timeline]

__all__ = [
    "DEFAULT_CAPACITY",
    "compile_instrumented",
    "k_steps_per_cta",
    "record_timeline",
    "timeline_layout",
]
