"""In-kernel timeline of a warp-specialized kernel: buffer layout, decoding, TMA overlap, SVG.

Without Nsight Systems, a kernel compiled with a profiling flag records its own phases: one
thread per warp role (producer, MMA consumers, epilogue...) writes, for each event it wants
to see, a record ``(event_id, start_clock, end_clock)`` into a global ``int64`` buffer, using
the device helpers of :mod:`mla_var3.profile.timeline_device`. Clocks are the SM's
``clock64`` (cycles); all warps of a CTA run on one SM, so times compare within a CTA.

The buffer is ``[cta][role][event][seq][3]`` int64 words for the first ``layout.ctas`` CTAs
(by linear block index): each (role, event) has its own ``capacity`` slots, so every event of
a step is kept. ``seq`` is chosen by the kernel (e.g. its k-tile counter) and must be the same
number on both sides of a pipeline stage: the producer's ``tma_issue`` for stage ``seq`` pairs
with the consumers' ``full_wait`` of the same ``seq``. A record repeats its event id (from 1),
which decoding checks; an all-zero record is unused.

:func:`tma_overlap` answers "is the TMA hidden behind compute?": the fraction of MMA time
during which loads were in flight (issued by the producer, not yet seen complete by a
consumer), and the fraction of consumer time spent waiting on full barriers.

A record keeps a :class:`Timeline` -- the spans as rows, the lane and legend order and a title
-- never the picture: :meth:`Timeline.svg` draws it when a page is built.
:func:`timeline_from_svg` reads the spans back out of an SVG this module drew, for results
that stored the picture only.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from xml.sax.saxutils import escape, quoteattr, unescape

from mla_var3.profile.errors import ProfileError

RECORD_WORDS = 3
# Conventional event names (a layout may use any others).
TMA_ISSUE, EMPTY_WAIT, FULL_WAIT, MMA, EPILOGUE = "tma_issue", "empty_wait", "full_wait", "mma", "epilogue"
_COLORS = {
    TMA_ISSUE: "#4c78a8",
    EMPTY_WAIT: "#bab0ac",
    FULL_WAIT: "#e45756",
    MMA: "#54a24b",
    EPILOGUE: "#f58518",
    "softmax": "#b279a2",
    "correction": "#9d755d",
}
_FALLBACK_COLORS = ("#72b7b2", "#eeca3b", "#ff9da6", "#79706e", "#d67195", "#439894")


@dataclass(frozen=True)
class TimelineLayout:
    """Which roles and events a kernel records, for how many CTAs, with room for ``capacity``
    steps per (CTA, role, event). Hashable, so a kernel can take it as a ``Constexpr``."""

    roles: tuple[str, ...]
    events: tuple[str, ...]
    ctas: int = 4
    capacity: int = 256

    def __post_init__(self) -> None:
        for kind, names in (("roles", self.roles), ("events", self.events)):
            if not names or len(set(names)) != len(names):
                raise ProfileError(f"timeline layout: {kind} must be non-empty and unique, got {names}")
        if self.ctas < 1 or self.capacity < 1:
            raise ProfileError("timeline layout: ctas and capacity must be positive")

    @property
    def words(self) -> int:
        """The buffer's length in int64 words."""
        return self.ctas * len(self.roles) * len(self.events) * self.capacity * RECORD_WORDS

    def offset(self, cta: int, role: int, event: int, seq: int) -> int:
        """The index of a record's first word (``role`` and ``event`` are positions in the tuples)."""
        return (((cta * len(self.roles) + role) * len(self.events) + event) * self.capacity + seq) * RECORD_WORDS


@dataclass(frozen=True)
class Span:
    """One recorded event: a CTA's role spent ``[start, end)`` cycles in ``event`` at step ``seq``."""

    cta: int
    role: str
    event: str
    seq: int
    start: int
    end: int

    @property
    def cycles(self) -> int:
        return self.end - self.start


def _flat(values: object) -> list[int]:
    if hasattr(values, "tolist"):
        values = values.tolist()
    out: list[int] = []
    for v in values:  # type: ignore[attr-defined]
        if isinstance(v, list):
            out.extend(_flat(v))
        else:
            out.append(int(v))
    return out


def decode_timeline(buffer: object, layout: TimelineLayout) -> list[Span]:
    """The spans recorded in ``buffer`` (a list, numpy array or CPU tensor of int64)."""
    words = _flat(buffer)
    if len(words) != layout.words:
        raise ProfileError(f"timeline buffer has {len(words)} words; the layout needs {layout.words}")
    spans = []
    for cta in range(layout.ctas):
        for r, role in enumerate(layout.roles):
            for e, event in enumerate(layout.events):
                for seq in range(layout.capacity):
                    at = layout.offset(cta, r, e, seq)
                    event_id, start, end = words[at : at + RECORD_WORDS]
                    if event_id == 0 and start == 0 and end == 0:
                        continue
                    if event_id != e + 1 or end < start:
                        raise ProfileError(
                            f"timeline record (cta {cta}, {role}, {event}, seq {seq}) = {(event_id, start, end)} "
                            f"is not a record of that slot: buffer and layout disagree"
                        )
                    spans.append(Span(cta, role, event, seq, start, end))
    return sorted(spans, key=lambda s: (s.cta, s.start, s.end))


def _union(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(intervals: Sequence[tuple[int, int]]) -> int:
    return sum(end - start for start, end in intervals)


def _intersection(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> int:
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class TmaOverlap:
    """How well a CTA's loads hide behind its MMAs, summed over the recorded CTAs (cycles)."""

    ctas: int
    mma_cycles: int
    mma_cycles_with_loads_in_flight: int
    full_wait_cycles: int
    consumer_cycles: int
    empty_wait_cycles: int
    producer_cycles: int

    @property
    def overlap_fraction(self) -> float | None:
        """Share of MMA time during which the producer had loads in flight."""
        return self.mma_cycles_with_loads_in_flight / self.mma_cycles if self.mma_cycles else None

    @property
    def full_wait_fraction(self) -> float | None:
        """Share of the consumers' time spent waiting for a stage to be filled."""
        return self.full_wait_cycles / self.consumer_cycles if self.consumer_cycles else None

    @property
    def empty_wait_fraction(self) -> float | None:
        """Share of the producer's time spent waiting for a stage to be freed."""
        return self.empty_wait_cycles / self.producer_cycles if self.producer_cycles else None

    def to_dict(self) -> dict[str, object]:
        return asdict(self) | {
            "overlap_fraction": self.overlap_fraction,
            "full_wait_fraction": self.full_wait_fraction,
            "empty_wait_fraction": self.empty_wait_fraction,
        }


def _role_cycles(spans: Sequence[Span], roles: set[str]) -> int:
    by_role: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        if s.role in roles:
            by_role[s.role].append(s)
    return sum(max(s.end for s in rs) - min(s.start for s in rs) for rs in by_role.values())


def _event_cycles(spans: Sequence[Span], event: str) -> int:
    by_role: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for s in spans:
        if s.event == event:
            by_role[s.role].append((s.start, s.end))
    return sum(_length(_union(iv)) for iv in by_role.values())


# --8<-- [start:tma_overlap]
def tma_overlap(
    spans: Sequence[Span],
    *,
    issue: str = TMA_ISSUE,
    full_wait: str = FULL_WAIT,
    empty_wait: str = EMPTY_WAIT,
    mma: str = MMA,
) -> TmaOverlap:
    """Loads in flight vs MMA time, and barrier waits, per CTA then summed.

    The load of stage ``seq`` is in flight from the start of the producer's ``issue`` span to
    the earliest end of a consumer's ``full_wait`` span with the same ``seq`` (by then the
    full barrier had completed). MMA time is the union of ``mma`` spans over consumer roles.
    """
    by_cta: dict[int, list[Span]] = defaultdict(list)
    for s in spans:
        by_cta[s.cta].append(s)
    totals = [0] * 6
    for cta_spans in by_cta.values():
        issued = {s.seq: s.start for s in cta_spans if s.event == issue}
        seen: dict[int, int] = {}
        for s in cta_spans:
            if s.event == full_wait and s.seq in issued:
                seen[s.seq] = min(seen.get(s.seq, s.end), s.end)
        in_flight = _union((issued[q], seen[q]) for q in seen)
        mma_time = _union((s.start, s.end) for s in cta_spans if s.event == mma)
        consumers = {s.role for s in cta_spans if s.event in (mma, full_wait)}
        producers = {s.role for s in cta_spans if s.event in (issue, empty_wait)}
        for i, value in enumerate(
            (
                _length(mma_time),
                _intersection(mma_time, in_flight),
                _event_cycles(cta_spans, full_wait),
                _role_cycles(cta_spans, consumers),
                _event_cycles(cta_spans, empty_wait),
                _role_cycles(cta_spans, producers),
            )
        ):
            totals[i] += value
    return TmaOverlap(len(by_cta), *totals)


# --8<-- [end:tma_overlap]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _cycles(value: float) -> str:
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.0f}"


def render_timeline_svg(
    spans: Sequence[Span],
    *,
    layout: TimelineLayout | None = None,
    overlap: TmaOverlap | None = None,
    max_ctas: int = 4,
    width: int = 960,
    title: str = "In-kernel timeline (SM cycles from each CTA's first record)",
) -> str:
    """An SVG with one lane per warp role per CTA (the first ``max_ctas`` CTAs), spans colored
    by event, a legend, and the TMA overlap summary (computed from all spans if not given)."""
    ctas = sorted({s.cta for s in spans})[:max_ctas]
    role_order = list(dict.fromkeys([*(layout.roles if layout else ()), *(s.role for s in spans)]))
    event_order = list(dict.fromkeys([*(layout.events if layout else ()), *sorted({s.event for s in spans})]))
    unknown = [e for e in event_order if e not in _COLORS]
    colors = {e: _COLORS.get(e) or _FALLBACK_COLORS[unknown.index(e) % len(_FALLBACK_COLORS)] for e in event_order}
    overlap = overlap if overlap is not None else tma_overlap(spans)

    left, right, lane_h, gap, top = 170, 20, 16, 4, 40
    lanes = [(c, r) for c in ctas for r in role_order if any(s.cta == c and s.role == r for s in spans)]
    origin = {c: min(s.start for s in spans if s.cta == c) for c in ctas}
    extent = max((s.end - origin[s.cta] for s in spans if s.cta in origin), default=1) or 1
    scale = (width - left - right) / extent
    plot_h = len(lanes) * (lane_h + gap)

    out = [f'<text x="{left}" y="20" font-size="13">{escape(title)}</text>']
    for i, (cta, role) in enumerate(lanes):
        y = top + i * (lane_h + gap)
        out.append(f'<text x="{left - 6}" y="{y + lane_h - 4}" text-anchor="end">CTA {cta} · {escape(role)}</text>')
        out.append(f'<rect class="lane" x="{left}" y="{y}" width="{width - left - right}" height="{lane_h}" fill="#f4f4f4"/>')
        for s in spans:
            if s.cta != cta or s.role != role:
                continue
            x = left + (s.start - origin[cta]) * scale
            w = max(s.cycles * scale, 0.5)
            tip = f"{s.event} seq {s.seq}: {s.cycles} cycles at +{s.start - origin[cta]}"
            out.append(
                f'<rect class="span" x="{x:.2f}" y="{y}" width="{w:.2f}" height="{lane_h}" '
                f"fill={quoteattr(colors.get(s.event, '#000000'))}><title>{escape(tip)}</title></rect>"
            )
    axis_y = top + plot_h + 12
    for k in range(5):
        x = left + k * (width - left - right) / 4
        label = _cycles(extent * k / 4) + (" cycles" if k == 4 else "")
        anchor = "end" if k == 4 else "middle"
        out.append(f'<text x="{x:.1f}" y="{axis_y}" text-anchor="{anchor}">{label}</text>')
    legend_y = axis_y + 22
    for k, event in enumerate(event_order):
        x, y = left + (k % 6) * 120, legend_y + 20 * (k // 6)
        out.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill={quoteattr(colors[event])}/>')
        out.append(f'<text x="{x + 16}" y="{y}">{escape(event)}</text>')
    summary_y = legend_y + 20 * ((len(event_order) + 5) // 6) + 10
    summary = (
        f"TMA overlap over {overlap.ctas} CTAs: loads in flight during {_pct(overlap.overlap_fraction)} of MMA time;",
        f"consumers waited on full barriers {_pct(overlap.full_wait_fraction)} of their time;",
        f"the producer waited on empty barriers {_pct(overlap.empty_wait_fraction)} of its time.",
    )
    for k, line in enumerate(summary):
        out.append(f'<text class="summary" x="{left}" y="{summary_y + 16 * k}">{escape(line)}</text>')
    height = summary_y + 16 * len(summary) + 10
    header = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'
    )
    return "\n".join([header, *out, "</svg>"]) + "\n"


SpanRow = tuple[int, str, str, int, int, int]  # cta, role, event, seq, start, end


@dataclass(frozen=True)
class Timeline:
    """What a record keeps of an in-kernel timeline: spans as rows ``(cta, role, event, seq,
    start, end)``, the lane and legend order, and the title. Overlap and SVG are computed."""

    title: str
    roles: tuple[str, ...]
    events: tuple[str, ...]
    spans: tuple[SpanRow, ...]

    @classmethod
    def of(cls, spans: Sequence[Span], layout: TimelineLayout | None, title: str) -> Timeline:
        roles = tuple(dict.fromkeys([*(layout.roles if layout else ()), *(s.role for s in spans)]))
        events = tuple(dict.fromkeys([*(layout.events if layout else ()), *(s.event for s in spans)]))
        return cls(title, roles, events, tuple((s.cta, s.role, s.event, s.seq, s.start, s.end) for s in spans))

    def span_list(self) -> list[Span]:
        return [Span(*row) for row in self.spans]

    @property
    def overlap(self) -> TmaOverlap:
        return tma_overlap(self.span_list())

    def svg(self, max_ctas: int = 4) -> str:
        layout = TimelineLayout(self.roles, self.events) if self.roles and self.events else None
        return render_timeline_svg(self.span_list(), layout=layout, overlap=self.overlap, max_ctas=max_ctas, title=self.title)


_LANE = re.compile(r'<text [^>]*text-anchor="end">CTA (\d+) · (.*?)</text>')
_SPAN = re.compile(r'<rect class="span" [^>]*><title>(.*?) seq (\d+): (\d+) cycles at \+(\d+)</title></rect>')
_LEGEND = re.compile(r'^<text x="\d+" y="\d+">(.*?)</text>$')
_TITLE = re.compile(r'<text [^>]*font-size="13">(.*?)</text>')


def timeline_from_svg(svg: str) -> Timeline:
    """The spans drawn in an SVG from :func:`render_timeline_svg` (starts counted from each CTA's
    first span, as drawn); a :class:`ProfileError` if it is not such a picture."""
    title = _TITLE.search(svg)
    cta, role = None, None
    rows: list[SpanRow] = []
    roles: dict[str, None] = {}
    events: dict[str, None] = {}
    for line in svg.splitlines():
        if lane := _LANE.search(line):
            cta, role = int(lane.group(1)), unescape(lane.group(2))
            roles[role] = None
        elif span := _SPAN.search(line):
            if cta is None or role is None:
                raise ProfileError("timeline SVG: a span comes before any lane label")
            start = int(span.group(4))
            rows.append((cta, role, unescape(span.group(1)), int(span.group(2)), start, start + int(span.group(3))))
        elif legend := _LEGEND.match(line):
            events[unescape(legend.group(1))] = None
    if title is None or not rows:
        raise ProfileError("timeline SVG: no title or no spans; not a picture drawn by render_timeline_svg")
    rows.sort(key=lambda r: (r[0], r[4], r[5]))
    return Timeline(unescape(title.group(1)), tuple(roles), tuple(events), tuple(rows))
