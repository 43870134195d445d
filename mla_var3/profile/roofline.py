"""Roofline of a timed kernel against ceilings measured in the same run, and its SVG plot.

``roofline(flops, bytes, seconds, ceilings)`` gives the achieved FLOP/s and B/s, the
arithmetic intensity, the percentage of each ceiling, and whether the kernel sits left
(``memory``) or right (``compute``) of the ridge point. Ceilings are measured, not taken from
a datasheet: a large device-to-device copy (B/s) and a cuBLAS matmul on random data
(FLOP/s); :func:`ceilings_from_dict` reads them from a record's ``ceilings`` section
(``<name>_flops_per_s`` / ``<name>_bytes_per_s`` keys).

``render_roofline_svg`` draws points and ceilings with matplotlib (Agg, no pyplot state) as a
deterministic SVG: fixed ``svg.hashsalt``, text kept as text, no date or creator metadata.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from mla_var3.profile.errors import ProfileError

COMPUTE, MEMORY = "compute", "memory"


@dataclass(frozen=True)
class Ceiling:
    """A measured limit: ``value`` in FLOP/s (``kind="compute"``) or B/s (``kind="memory"``)."""

    name: str
    kind: str
    value: float

    def __post_init__(self) -> None:
        if self.kind not in (COMPUTE, MEMORY) or not self.value > 0:
            raise ProfileError(f"ceiling {self.name!r}: kind must be compute or memory and value > 0")


def ceilings_from_dict(ceilings: Mapping[str, object]) -> list[Ceiling]:
    """``{"matmul_flops_per_s": 7.1e14, "copy_bytes_per_s": 4.2e12, ...}`` as ceilings (other keys ignored)."""
    out = []
    for key, value in ceilings.items():
        for suffix, kind in (("_flops_per_s", COMPUTE), ("_bytes_per_s", MEMORY)):
            if key.endswith(suffix) and isinstance(value, int | float):
                out.append(Ceiling(key.removesuffix(suffix), kind, float(value)))
    return out


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
        if intensity is not None:
            attainable = min(peak_compute, intensity * peak_memory)
            pct_of_roof = 100 * flops_per_s / attainable
            bound = MEMORY if intensity < ridge else COMPUTE
    return Roofline(label, flops, bytes, seconds, flops_per_s, bytes_per_s, intensity, pct_of,
                    ridge, attainable, pct_of_roof, bound)  # fmt: skip


# --8<-- [end:roofline]


def _decade_range(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    return 10 ** math.floor(math.log10(low / 3)), 10 ** math.ceil(math.log10(high * 3))


def render_roofline_svg(points: Sequence[Roofline], ceilings: Sequence[Ceiling], title: str = "Roofline") -> str:
    """A log-log roofline (FLOP/byte vs TFLOP/s): one line per ceiling, one labelled dot per point."""
    import matplotlib
    from matplotlib.figure import Figure

    compute = sorted((c for c in ceilings if c.kind == COMPUTE), key=lambda c: -c.value)
    memory = sorted((c for c in ceilings if c.kind == MEMORY), key=lambda c: -c.value)
    if not compute or not memory:
        raise ProfileError("roofline plot: needs at least one compute and one memory ceiling")
    plotted = [p for p in points if p.arithmetic_intensity]
    ridges = [c.value / m.value for c in compute for m in memory]
    x_lo, x_hi = _decade_range([*ridges, *(p.arithmetic_intensity for p in plotted)])  # type: ignore[misc]

    with matplotlib.rc_context({"svg.hashsalt": "mla_var3-roofline", "svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(7.0, 4.5))
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        for m in memory:  # diagonal: B/s x intensity, up to the highest compute ceiling
            x_end = compute[0].value / m.value
            ax.plot([x_lo, x_end], [m.value * x_lo / 1e12, compute[0].value / 1e12], color="#4c78a8")
            ax.annotate(f"{m.name} {m.value / 1e9:.0f} GB/s", (x_lo * 1.5, m.value * x_lo * 1.5 / 1e12),
                        rotation=30, color="#4c78a8", va="bottom")  # fmt: skip
        for c in compute:  # horizontal, from its ridge with the fastest memory ceiling
            x_start = c.value / memory[0].value
            ax.plot([x_start, x_hi], [c.value / 1e12, c.value / 1e12], color="#e45756")
            ax.annotate(f"{c.name} {c.value / 1e12:.0f} TFLOP/s", (x_hi / 1.2, c.value / 1e12), ha="right",
                        va="bottom", color="#e45756")  # fmt: skip
        for p in plotted:
            ax.plot([p.arithmetic_intensity], [p.flops_per_s / 1e12], "o", color="#54a24b")
            ax.annotate(p.label, (p.arithmetic_intensity, p.flops_per_s / 1e12), textcoords="offset points",
                        xytext=(5, -10))  # fmt: skip
        ax.set_xlim(x_lo, x_hi)
        ax.set_xlabel("arithmetic intensity (FLOP / byte)")
        ax.set_ylabel("TFLOP/s")
        ax.set_title(title)
        ax.grid(True, which="major", linewidth=0.3)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    return out.getvalue()
