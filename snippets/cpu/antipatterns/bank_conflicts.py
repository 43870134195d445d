"""The two transposes of ``snippets/gpu/smem_swizzle.py`` compiled for sm_90a on the CPU: the row-major SMEM
tile whose column reads are 32-way bank conflicts, and the ``S<5,0,5>``-swizzled one.

Both compile to the same shared-memory instructions, four 32-bit ``STS`` and four ``LDS`` per thread; what
differs is the address arithmetic. Unswizzled, a thread's four column reads share one address register
(immediate offsets); swizzled, each address is XORed on its own (``LOP3.LUT`` with the XOR truth table
``0x3c``). The conflict itself is a property of the addresses the 32 lanes present at run time, which no
count of instructions shows: ``snippets.cpu.memory_estimates.bank_table`` computes it from the layouts.
"""

from __future__ import annotations

import re
from functools import cache

import cuda.bindings.driver as cuda
import cutlass

from mla_var3.analysis.sass import disassemble, histogram_of
from mla_var3.kernel.tensors import fake_dynamic_tensor
from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for
from snippets.gpu.smem_swizzle import TILE, SmemTranspose

LDS_RE = re.compile(r"\bLDS R\d+, \[(R\d+)(\+0x[0-9a-f]+)?\]")
XOR_RE = re.compile(r"LOP3\.LUT .*0x3c")


@cache
def disassembly(swizzle: bool) -> str:
    """``nvdisasm`` of the transpose compiled for sm_90a (dynamic m, n)."""
    args = [fake_dynamic_tensor(cutlass.Float32, (TILE, TILE)) for _ in range(2)]
    return disassemble(compile_for(SmemTranspose(swizzle), *args, cuda.CUstream(0), arch="sm_90a").artifacts.CUBIN)


def facts(swizzle: bool) -> tuple[int, int, int, int]:
    """(STS, LDS, distinct address registers of the LDS, XOR LOP3s) of one form."""
    text = disassembly(swizzle)
    counts = histogram_of(text)
    registers = {m.group(1) for m in LDS_RE.finditer(text)}
    return counts.get("STS", 0), counts.get("LDS", 0), len(registers), len(XOR_RE.findall(text))


@expect(prints="row-major tile: STS ×4, LDS ×4; LDS addresses from 1 register(s); 0 XOR (LOP3.LUT 0x3c)\n"
               "swizzled tile:  STS ×4, LDS ×4; LDS addresses from 4 register(s); 8 XOR (LOP3.LUT 0x3c)")  # fmt: skip
def symptom() -> None:
    for label, swizzle in (("row-major tile:", False), ("swizzled tile: ", True)):
        sts, lds, registers, xors = facts(swizzle)
        print(f"{label} STS ×{sts}, LDS ×{lds}; LDS addresses from {registers} register(s); {xors} XOR (LOP3.LUT 0x3c)")
