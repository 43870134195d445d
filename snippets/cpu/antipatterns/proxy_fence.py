"""The TMA-store hand-off of ``snippets/gpu/proxy_fence_tma_store.py`` compiled for sm_90a on the CPU, with
and without ``fence_proxy("async.shared", space="cta")`` between the plain SMEM stores and the barrier.

Both forms compile without a word; the unfenced one simply lacks the fence's two instructions
(``MEMBAR.ALL.CTA``, ``FENCE.VIEW.ASYNC.S``) between the last ``STS`` and the ``BAR.SYNC`` that hands the
tile to the ``UTMASTG``. Nothing else in the SASS differs but scheduling (one ``ISETP`` placed elsewhere) and
padding ``NOP``s, so no tool that reads the binary alone can say the fence is missing -- only the rule can.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from functools import cache

import cuda.bindings.driver as cuda
import cutlass

from mla_var3.analysis.sass import disassemble, histogram_of
from mla_var3.kernel.tensors import fake_dynamic_tensor
from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for, opcode_count
from snippets.gpu.proxy_fence_tma_store import ROWS_PER_CTA, TILE_N, TmaStoreHandoff

SHOWN = ("STS", "MEMBAR", "FENCE", "BAR", "UTMASTG", "DEPBAR")
_LINE_RE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?P<body>[^;]*);")


@cache
def compiled(proxy_fence: bool) -> tuple[str, str]:
    """The SASS of the hand-off kernel for sm_90a, and what the compile printed (with ``warnings{nvvm}``)."""
    args = [fake_dynamic_tensor(cutlass.Float32, (ROWS_PER_CTA, TILE_N)) for _ in range(2)]
    printed = io.StringIO()
    with redirect_stdout(printed), redirect_stderr(printed):
        fn = compile_for(
            TmaStoreHandoff(proxy_fence), *args, cuda.CUstream(0), arch="sm_90a", options="warnings{nvvm}"
        )
    return disassemble(fn.artifacts.CUBIN), printed.getvalue()


def counts(proxy_fence: bool) -> dict[str, int]:
    """Opcode -> count (modifiers folded: ``UTMASTG.2D`` counts as ``UTMASTG``) of the instructions shown."""
    histogram = histogram_of(compiled(proxy_fence)[0])
    return {op: opcode_count(histogram, op) for op in ("STS", "MEMBAR", "FENCE", "BAR", "UTMASTG")}


def sass_excerpt(proxy_fence: bool) -> str:
    """The loop body's SMEM stores (the last one), the fence, the barriers and the TMA store, in program order."""
    bodies = [
        m.group("body").strip() for m in map(_LINE_RE.search, compiled(proxy_fence)[0].splitlines()) if m
    ]
    shown = [b for b in bodies if b.split()[0].startswith(SHOWN)]
    # 32 STS per tile: keep the last one, where the hand-off starts.
    last_sts = max(i for i, b in enumerate(shown) if b.startswith("STS"))
    first_sts = min(i for i, b in enumerate(shown) if b.startswith("STS"))
    kept = shown[:first_sts] + [f"... {last_sts - first_sts} more STS ..."] + shown[last_sts:]
    return "\n".join(kept)


def report(proxy_fence: bool) -> str:
    """One line: whether the compile said anything, and the hand-off's instruction counts."""
    sass_counts = counts(proxy_fence)
    said = "nothing" if not compiled(proxy_fence)[1].strip() else "something"
    return f"compile printed {said}; SASS " + ", ".join(f"{op} ×{n}" for op, n in sass_counts.items())


@expect(prints="with fence_proxy: compile printed nothing; SASS STS ×32, MEMBAR ×1, FENCE ×1, BAR ×2, UTMASTG ×1\n"
               "without:          compile printed nothing; SASS STS ×32, MEMBAR ×0, FENCE ×0, BAR ×2, UTMASTG ×1")  # fmt: skip
def symptom() -> None:
    for label, fenced in (("with fence_proxy:", True), ("without:         ", False)):
        print(f"{label} {report(fenced)}")
