"""Compile CuTe DSL functions on a CPU for the concept pages: the binary, its clean IR, its SASS mix.

Shared by the ``snippets/cpu`` files the Concepts pages run at build time. Everything here targets
an architecture explicitly (``--gpu-arch``), so no GPU or driver is involved; the host program's
``sys.argv`` is hidden while compiling, because the DSL parses it (``mkdocs build -d DIR`` would
otherwise make ``cute.compile`` exit).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cutlass.cute as cute

from mla_var3.analysis.sass import instruction_histogram, pattern_classes
from mla_var3.knowledge.expected import program_name_only


def compile_for(fn: Callable[..., Any], *args: Any, arch: str = "sm_90a", options: str = "") -> Any:
    """``cute.compile(fn, *args)`` for ``arch``, with the cubin kept in memory (``.artifacts.CUBIN``)."""
    with tempfile.TemporaryDirectory() as dump, program_name_only():
        return cute.compile(fn, *args, options=f"--gpu-arch {arch} --keep-cubin --dump-dir {dump} {options}".strip())


def clean_ir(fn: Callable[..., Any], *args: Any, arch: str = "sm_90a") -> str:
    """The module's MLIR after canonicalize + CSE (what ``CUTE_DSL_KEEP=ir`` writes), before lowering."""
    from cutlass.cutlass_dsl import CuTeDSL

    dsl = CuTeDSL._get_dsl()
    saved = dsl.envar.keep_ir_clean, dsl.envar.dump_dir
    with tempfile.TemporaryDirectory() as dump:
        dsl.envar.keep_ir_clean, dsl.envar.dump_dir = True, dump
        try:
            compile_for(fn, *args, arch=arch)
        finally:
            dsl.envar.keep_ir_clean, dsl.envar.dump_dir = saved
        (path,) = Path(dump).glob("*_clean.mlir")
        return path.read_text()


def kernel_ir(ir: str) -> str:
    """The device part of a module's IR: from the first ``cuda.kernel`` to the host function."""
    start = ir.index("cuda.kernel")
    end = ir.find("func.func", start)
    return ir[start : end if end > 0 else len(ir)]


def sass_counts(compiled: Any) -> dict[str, int]:
    """Mnemonic -> count in the compiled cubin (``nvdisasm``), modifiers included (``LDG.E.128``)."""
    return instruction_histogram(compiled.artifacts.CUBIN)


def sass_classes(compiled: Any) -> dict[str, int]:
    """The pattern classes of the cubin (``mla_var3.analysis.sass``: ``ldg_128``, ``wgmma``, ...)."""
    return pattern_classes(sass_counts(compiled))


def opcode_count(histogram: dict[str, int], opcode: str) -> int:
    """How many instructions of ``opcode`` (any modifiers): ``BRA`` counts ``BRA`` and ``BRA.U``."""
    return sum(n for mnemonic, n in histogram.items() if mnemonic.split(".", 1)[0] == opcode)
