"""Per-kernel resources of a cubin: registers per thread, static SMEM, local memory, stack.

Read with ``cuobjdump --dump-resource-usage``, which prints for each kernel::

     Function kernel_cutlass_...:
      REG:70 STACK:0 SHARED:1024 LOCAL:0 CONSTANT[0]:1224 TEXTURE:0 SURFACE:0 SAMPLER:0

``SHARED`` is the static SMEM only (for CuTe DSL kernels, the 1 KiB the driver reserves):
the dynamic SMEM a kernel really uses is a launch parameter, not in the cubin. ``LOCAL`` is
per-thread local memory: register spills and local arrays. Spills do not always show there:
ptxas may place them in the ``STACK`` frame and report ``LOCAL:0`` (an MLA cuTile kernel showed
``STACK:216`` with 54 ``STL``), so a spill check reads both fields and counts the ``LDL``/``STL``
instructions in the SASS (``sass.py``'s ``local_memory`` class).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from mla_var3.analysis.tools import AnalysisError, run_on_cubin

_FUNCTION_RE = re.compile(r"^\s*Function\s+(?P<name>\S+?):\s*$")
_FIELD_RE = re.compile(r"(?P<key>[A-Z]+(?:\[\d+\])?):(?P<value>\d+)")


@dataclass(frozen=True)
class KernelResources:
    """What one kernel of a cubin uses per thread and per block (static part)."""

    kernel: str
    registers: int
    static_smem_bytes: int
    local_bytes: int
    stack_bytes: int
    constant_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_resource_usage(text: str) -> list[KernelResources]:
    """The kernels in ``cuobjdump --dump-resource-usage`` output, in the order printed."""
    kernels: list[KernelResources] = []
    name: str | None = None
    for line in text.splitlines():
        match = _FUNCTION_RE.match(line)
        if match:
            name = match.group("name")
            continue
        if name is None:
            continue
        fields = {m.group("key"): int(m.group("value")) for m in _FIELD_RE.finditer(line)}
        if "REG" not in fields:
            continue
        kernels.append(
            KernelResources(
                kernel=name,
                registers=fields["REG"],
                static_smem_bytes=fields.get("SHARED", 0),
                local_bytes=fields.get("LOCAL", 0),
                stack_bytes=fields.get("STACK", 0),
                constant_bytes=fields.get("CONSTANT[0]", 0),
            )
        )
        name = None
    return kernels


def resource_usage(cubin: bytes) -> list[KernelResources]:
    """The resources of every kernel in ``cubin`` (no GPU needed)."""
    kernels = parse_resource_usage(run_on_cubin("cuobjdump", ["--dump-resource-usage"], cubin))
    if not kernels:
        raise AnalysisError("cuobjdump --dump-resource-usage listed no kernel in the cubin")
    return kernels
