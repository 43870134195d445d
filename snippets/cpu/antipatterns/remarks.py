"""Compile with ptxas's remarks on and keep what the DSL printed about them, for the anti-pattern pages.

``remarks{ptx}`` in a compile's options makes the DSL print ptxas's own information lines and its
performance remarks (local memory, serialized WGMMA), each pointing at the source line it blames.
They go to the console, not into the compiled object: :func:`compile_with_remarks` captures them.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

from mla_var3.knowledge.expected import clean
from snippets.cpu.dsl_tools import compile_for

PTXAS_CODE_RE = re.compile(r"\((C\d{4})\) ([^\n]*?)(?: in (?:the )?function '|$)", re.MULTILINE)
PTX_LINE_RE = re.compile(r" in around line \d+")  # a line of the generated PTX: changes with any edit


def compile_with_remarks(fn: Callable[..., Any], *args: Any, arch: str = "sm_90a") -> tuple[Any, str]:
    """``compile_for(fn, *args)`` with ``remarks{ptx}``: the compiled function and the printed remarks."""
    printed = io.StringIO()
    with redirect_stdout(printed), redirect_stderr(printed):
        compiled = compile_for(fn, *args, arch=arch, options="remarks{ptx}")
    return compiled, clean(printed.getvalue())


def numbered_remarks(text: str) -> list[str]:
    """ptxas's numbered remarks in ``text`` as ``Cnnnn message`` (kernel names and PTX line numbers cut)."""
    return [f"{code} {PTX_LINE_RE.sub('', ' '.join(message.split()))}" for code, message in PTXAS_CODE_RE.findall(text)]


def headline(text: str) -> str:
    """A remark as a reader meets it: its title, the source line it points at, its explanation
    (everything before ptxas's own log)."""
    return text.split("ptxas output:", 1)[0].rstrip()
