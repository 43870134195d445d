"""GPU-free analysis of compiled kernels: resources (cuobjdump) and SASS instruction mix (nvdisasm).

Works on cubins for any arch (sm_80, sm_90a, sm_100a, ...) on a machine with no GPU. Results
are plain dataclasses with ``to_dict()``; the evidence layer stores them.
"""

from mla_var3.analysis.cubin import CubinAnalysis, analyze_cubin
from mla_var3.analysis.resources import KernelResources, parse_resource_usage, resource_usage
from mla_var3.analysis.sass import (
    CLASSES,
    SassReport,
    class_description,
    disassemble,
    histogram_of,
    instruction_histogram,
    opcode_histogram,
    parse_sass,
    pattern_classes,
    sass_report,
)
from mla_var3.analysis.tools import AnalysisError, ToolNotFoundError, find_tool

__all__ = [
    "CLASSES",
    "AnalysisError",
    "CubinAnalysis",
    "KernelResources",
    "SassReport",
    "ToolNotFoundError",
    "analyze_cubin",
    "class_description",
    "disassemble",
    "find_tool",
    "histogram_of",
    "instruction_histogram",
    "opcode_histogram",
    "parse_resource_usage",
    "parse_sass",
    "pattern_classes",
    "resource_usage",
    "sass_report",
]
