"""Roofline of a timed kernel against ceilings measured in the same run, and its SVG plot.

``roofline(flops, bytes, seconds, ceilings)`` gives the achieved FLOP/s and B/s, the
arithmetic intensity, the percentage of each ceiling, and whether the kernel sits left
(``memory``) or right (``compute``) of the ridge point. It is the one place these numbers
are computed: the runner prints them, the evidence layer renders them from a record.

Ceilings are measured, not taken from a datasheet: a large device-to-device copy (B/s) and
cuBLAS matmuls on random data (FLOP/s), each :class:`Ceiling` saying how it was measured.
Datasheet peaks (:data:`DATASHEETS`) are drawn beside them as a cited second reference.

``draw_roofline`` draws runs -- each with its own ceilings and points -- with matplotlib
(Agg, no pyplot state) as a deterministic SVG: fixed ``svg.hashsalt``, text kept as text, no
date or creator metadata. Point labels are placed so that no two overlap
(:func:`place_labels`); the figure reports the boxes it drew them in.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from mla_var3.profile.errors import ProfileError

COMPUTE, MEMORY = "compute", "memory"


@dataclass(frozen=True)
class Ceiling:
    """A limit: ``value`` in FLOP/s (``kind="compute"``) or B/s (``kind="memory"``), and how it was found."""

    name: str
    kind: str
    value: float
    method: str = ""

    def __post_init__(self) -> None:
        if self.kind not in (COMPUTE, MEMORY) or not self.value > 0:
            raise ProfileError(f"ceiling {self.name!r}: kind must be compute or memory and value > 0")

    def label(self) -> str:
        return f"{self.name} {self.value / 1e12:,.0f} TFLOP/s" if self.kind == COMPUTE else f"{self.name} {self.value / 1e12:.2f} TB/s"


@dataclass(frozen=True)
class Datasheet:
    """A GPU's published peaks, with the document they are quoted from."""

    device: str
    source: str
    ceilings: tuple[Ceiling, ...]


_H200 = "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column; dense = half the quoted sparse rate)"
DATASHEETS: dict[str, Datasheet] = {
    "NVIDIA H200": Datasheet(
        "NVIDIA H200",
        _H200,
        (
            Ceiling("HBM3e", MEMORY, 4.8e12, _H200),
            Ceiling("dense bf16/fp16", COMPUTE, 989e12, _H200),
            Ceiling("dense fp8", COMPUTE, 1979e12, _H200),
        ),
    ),
}


@dataclass(frozen=True)
class Roofline:
    """Where one timed kernel sits: achieved rates, intensity, and how far from each ceiling.

    ``pct_of`` maps each ceiling's name to 100 x achieved / ceiling (FLOP/s for compute
    ceilings, B/s for memory ones). ``attainable_flops_per_s`` is the roof at this intensity
    (the highest compute ceiling, or intensity x the highest memory ceiling if lower) and
    ``pct_of_roof`` the achieved share of it. ``bound`` is ``None`` without both kinds of ceiling.
    """

    label: str
    flops: float
    bytes: float
    seconds: float
    flops_per_s: float
    bytes_per_s: float
    arithmetic_intensity: float | None
    pct_of: dict[str, float] = field(default_factory=dict)
    ridge_intensity: float | None = None
    attainable_flops_per_s: float | None = None
    pct_of_roof: float | None = None
    bound: str | None = None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict; each ``pct_of`` entry also appears as ``pct_of_<name>_ceiling``."""
        return asdict(self) | {f"pct_of_{name}_ceiling": pct for name, pct in self.pct_of.items()}


# --8<-- [start:roofline]
def roofline(flops: float, bytes: float, seconds: float, ceilings: Sequence[Ceiling], label: str = "") -> Roofline:
    """Place a kernel that did ``flops`` and moved ``bytes`` (the algorithmic minimum) in ``seconds``."""
    if not seconds > 0:
        raise ProfileError(f"roofline: time must be positive, got {seconds} s")
    flops_per_s, bytes_per_s = flops / seconds, bytes / seconds
    intensity = flops / bytes if bytes > 0 else None
    pct_of = {c.name: 100 * (flops_per_s if c.kind == COMPUTE else bytes_per_s) / c.value for c in ceilings}
    peak_compute = max((c.value for c in ceilings if c.kind == COMPUTE), default=None)
    peak_memory = max((c.value for c in ceilings if c.kind == MEMORY), default=None)
    ridge = attainable = pct_of_roof = bound = None
    if peak_compute and peak_memory:
        ridge = peak_compute / peak_memory
        if intensity:
            attainable = min(peak_compute, intensity * peak_memory)
            pct_of_roof = 100 * flops_per_s / attainable
            bound = MEMORY if intensity < ridge else COMPUTE
        elif intensity == 0:  # a pure data mover (a copy): its roof is the memory ceiling alone
            pct_of_roof = 100 * bytes_per_s / peak_memory
            bound = MEMORY
    return Roofline(label, flops, bytes, seconds, flops_per_s, bytes_per_s, intensity, pct_of,
                    ridge, attainable, pct_of_roof, bound)  # fmt: skip


# --8<-- [end:roofline]


def roofline_for_dtype(
    flops: float, bytes: float, seconds: float, ceilings: Sequence[Ceiling], dtype: str, label: str = ""
) -> Roofline:
    """The roofline against a run's own ceilings as a kernel of ``dtype`` meets them: the memory
    ceilings, and as ``matmul`` the measured ``matmul_<dtype>`` rate (the fastest measured matmul
    where its dtype has none, e.g. fp32). Its ``pct_of_matmul_ceiling`` is what pages quote."""
    compute = [c for c in ceilings if c.kind == COMPUTE]
    own = next((c for c in compute if c.name == f"matmul_{dtype}"), None) or max(compute, key=lambda c: c.value, default=None)
    chosen = [c for c in ceilings if c.kind == MEMORY] + ([Ceiling("matmul", COMPUTE, own.value, own.method)] if own else [])
    return roofline(flops, bytes, seconds, chosen, label)


@dataclass(frozen=True)
class RooflineRun:
    """One run's measured ceilings and the points timed in it (each point is read against these)."""

    label: str
    ceilings: tuple[Ceiling, ...]
    points: tuple[Roofline, ...]


@dataclass(frozen=True)
class RooflineFigure:
    """The SVG and, in figure pixels, the box of every point label (``x0, y0, x1, y1``)."""

    svg: str
    label_boxes: tuple[tuple[float, float, float, float], ...]


Box = tuple[float, float, float, float]


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(
    anchors: Sequence[tuple[float, float]], sizes: Sequence[tuple[float, float]], right: float | None = None, gap: float = 2.0
) -> list[Box]:
    """Boxes for labels of ``sizes`` (w, h) next to ``anchors`` (x, y; y up), no two overlapping.

    Each label starts beside its anchor, centred on it -- right of it, or left where it would
    cross ``right`` (the plot's edge); if it would touch a label already placed it moves down,
    then up, one label height at a time, until it is clear.
    """
    placed: list[Box] = []
    boxes: dict[int, Box] = {}
    reach = 4 * (len(anchors) + 1)
    for i in sorted(range(len(anchors)), key=lambda i: (-anchors[i][1], anchors[i][0])):
        (x, y), (w, h) = anchors[i], sizes[i]
        x0 = x - 6 - w if right is not None and x + 6 + w > right else x + 6
        shifts = [0.0] + [sign * (h + gap) * k for k in range(1, reach) for sign in (-1, 1)]
        for shift in shifts:
            box = (x0, y - h / 2 + shift, x0 + w, y + h / 2 + shift)
            if not any(_overlaps(box, other) for other in placed):
                break
        placed.append(box)
        boxes[i] = box
    return [boxes[i] for i in range(len(anchors))]


def _decade_range(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    return 10 ** math.floor(math.log10(low / 3)), 10 ** math.ceil(math.log10(high * 3))


_RUN_COLORS = ("#4c78a8", "#e45756", "#54a24b", "#b279a2", "#f58518", "#9d755d")
_DASHES = ("-", "--", "-.", ":")


def draw_roofline(
    runs: Sequence[RooflineRun], reference: Sequence[Ceiling] = (), title: str = "Roofline", reference_label: str = ""
) -> RooflineFigure:
    """A log-log roofline (FLOP/byte vs TFLOP/s): each run's ceilings and points in its own colour,
    ``reference`` ceilings (datasheet peaks) in grey dots, ceiling values in the legend."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    all_ceilings = [c for run in runs for c in run.ceilings] + list(reference)
    compute = [c for c in all_ceilings if c.kind == COMPUTE]
    memory = [c for c in all_ceilings if c.kind == MEMORY]
    if not compute or not memory:
        raise ProfileError("roofline plot: needs at least one compute and one memory ceiling")
    points = [(p, i) for i, run in enumerate(runs) for p in run.points if p.arithmetic_intensity]
    ridges = [c.value / m.value for c in compute for m in memory]
    x_lo, x_hi = _decade_range([*ridges, *(p.arithmetic_intensity for p, _ in points)])  # type: ignore[misc]
    top = max(c.value for c in compute)

    with matplotlib.rc_context({"svg.hashsalt": "mla_var3-roofline", "svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(7.0, 4.8))
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        groups = [(run.label, run.ceilings, _RUN_COLORS[i % len(_RUN_COLORS)]) for i, run in enumerate(runs)]
        if reference:
            groups.append((reference_label, tuple(reference), "#9a9a9a"))
        for label, ceilings, color in groups:
            own_top = max((c.value for c in ceilings if c.kind == COMPUTE), default=top)
            for k, c in enumerate(sorted(ceilings, key=lambda c: (c.kind, -c.value))):
                style = ":" if color == "#9a9a9a" else _DASHES[k % len(_DASHES)]
                name = f"{label}: {c.label()}" if label else c.label()
                if c.kind == MEMORY:  # diagonal: B/s x intensity, up to this group's highest compute ceiling
                    x_end = own_top / c.value
                    ax.plot([x_lo, x_end], [c.value * x_lo / 1e12, own_top / 1e12], style, color=color, label=name)
                else:  # horizontal, from its ridge with this group's fastest memory ceiling
                    fastest = max((m.value for m in ceilings if m.kind == MEMORY), default=max(m.value for m in memory))
                    ax.plot([c.value / fastest, x_hi], [c.value / 1e12] * 2, style, color=color, label=name)
        texts = []
        for p, i in points:
            xy = (p.arithmetic_intensity, p.flops_per_s / 1e12)
            ax.plot([xy[0]], [xy[1]], "o", color=_RUN_COLORS[i % len(_RUN_COLORS)])
            texts.append((ax.annotate(p.label, xy, textcoords="offset points", xytext=(0, 0)), xy))
        ax.set_xlim(x_lo, x_hi)
        ax.set_xlabel("arithmetic intensity (FLOP / byte)")
        ax.set_ylabel("TFLOP/s")
        ax.set_title(title)
        ax.grid(True, which="major", linewidth=0.3)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=7, frameon=False, ncol=1)
        boxes = _place_texts(fig, canvas, ax, texts)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    return RooflineFigure(out.getvalue(), tuple(boxes))


def _place_texts(fig: object, canvas: object, ax: object, texts: list) -> list[Box]:
    """Move each annotation to its :func:`place_labels` box; returns the boxes as drawn."""
    renderer = canvas.get_renderer()  # type: ignore[attr-defined]
    anchors = [tuple(ax.transData.transform(xy)) for _, xy in texts]  # type: ignore[attr-defined]
    sizes = []
    for text, _ in texts:
        extent = text.get_window_extent(renderer)
        sizes.append((extent.width, extent.height))
    boxes = place_labels(anchors, sizes, right=ax.bbox.x1)  # type: ignore[arg-type, attr-defined]
    to_points = 72 / fig.dpi  # type: ignore[attr-defined]
    for (text, _), (x, y), box in zip(texts, anchors, boxes, strict=True):
        text.set_position(((box[0] - x) * to_points, (box[1] - y) * to_points))
        text.set_verticalalignment("bottom")
    drawn = []
    for text, _ in texts:
        extent = text.get_window_extent(renderer)
        drawn.append((extent.x0, extent.y0, extent.x1, extent.y1))
    return drawn
