"""Measuring layer: ncu, compute-sanitizer, NVTX/Kineto traces, in-kernel timelines, rooflines.

Every function returns plain results (dataclasses with ``to_dict()``); the evidence layer
files them. Importing this package loads no GPU library: torch, matplotlib, PyYAML and the
CuTe DSL are imported inside the functions that need them, and the DSL device helpers live
in :mod:`mla_var3.profile.timeline_device`, which is not imported here.
"""

from mla_var3.profile.annotation import TraceSummary, phase, summarize_trace, trace_callable
from mla_var3.profile.errors import ProfileError
from mla_var3.profile.ncu import SM90_METRICS, NcuResult, ncu_command, parse_ncu_csv, run_ncu
from mla_var3.profile.roofline import Ceiling, Roofline, ceilings_from_dict, render_roofline_svg, roofline
from mla_var3.profile.sanitizer import (
    AllowEntry,
    SanitizerResult,
    ToolResult,
    judge,
    load_allow_list,
    run_sanitizer,
    sanitizer_command,
)
from mla_var3.profile.timeline import (
    Span,
    TimelineLayout,
    TmaOverlap,
    decode_timeline,
    render_timeline_svg,
    tma_overlap,
)

__all__ = [
    "SM90_METRICS",
    "AllowEntry",
    "Ceiling",
    "NcuResult",
    "ProfileError",
    "Roofline",
    "SanitizerResult",
    "Span",
    "TimelineLayout",
    "TmaOverlap",
    "ToolResult",
    "TraceSummary",
    "ceilings_from_dict",
    "decode_timeline",
    "judge",
    "load_allow_list",
    "ncu_command",
    "parse_ncu_csv",
    "phase",
    "render_roofline_svg",
    "render_timeline_svg",
    "roofline",
    "run_ncu",
    "run_sanitizer",
    "sanitizer_command",
    "summarize_trace",
    "tma_overlap",
    "trace_callable",
]
