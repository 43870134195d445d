"""Everything the GPU-free analysis reads from one cubin: resources per kernel and the SASS mix.

The dynamic SMEM of a launch is not in the cubin; the caller passes the kernel's own budget
(``Compiled.dynamic_smem_bytes``) so that one record holds all SMEM numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mla_var3.analysis.resources import KernelResources, resource_usage
from mla_var3.analysis.sass import SassReport, pattern_classes, sass_report


@dataclass(frozen=True)
class CubinAnalysis:
    """Resources and SASS of a cubin compiled for ``arch``."""

    arch: str
    resources: list[KernelResources]
    sass: SassReport
    dynamic_smem_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON dict: ``resources``, ``dynamic_smem_bytes`` and ``sass_*`` keys."""
        return {
            "arch": self.arch,
            "dynamic_smem_bytes": self.dynamic_smem_bytes,
            "resources": [r.to_dict() for r in self.resources],
            "sass_instructions": self.sass.instructions,
            "sass_classes": self.sass.classes,
            "sass_opcodes": self.sass.opcodes,
            "sass_histogram": self.sass.histogram,
            "sass_kernels": self.sass.kernels,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CubinAnalysis:
        """The inverse of :meth:`to_dict` (``KeyError``/``TypeError`` on a malformed dict); the classes
        are recomputed from the histogram, so a stored analysis follows the current class list."""
        sass = SassReport(
            arch=data["arch"],
            instructions=data["sass_instructions"],
            kernels=data["sass_kernels"],
            histogram=data["sass_histogram"],
            opcodes=data["sass_opcodes"],
            classes=pattern_classes(data["sass_histogram"]),
        )
        resources = [KernelResources(**r) for r in data["resources"]]
        return cls(
            arch=data["arch"], resources=resources, sass=sass, dynamic_smem_bytes=data["dynamic_smem_bytes"]
        )


def analyze_cubin(cubin: bytes, arch: str, dynamic_smem_bytes: int | None = None) -> CubinAnalysis:
    """Run ``cuobjdump`` and ``nvdisasm`` on ``cubin`` (compiled for ``arch``)."""
    return CubinAnalysis(
        arch=arch,
        resources=resource_usage(cubin),
        sass=sass_report(cubin, arch),
        dynamic_smem_bytes=dynamic_smem_bytes,
    )
