"""The get-started page's command session: what it states about the CLI's output holds.

Read from the page as the real site build (:func:`conftest.real_site`) rendered it: the build ran each
command of :data:`~snippets.cpu.get_started.COMMANDS` in a process of its own, so these checks are on
the output a reader sees, without running the three commands a second time.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from snippets.cpu.get_started import COMMANDS

PROMPT = "$ python -m mla_var3.kernel "


@pytest.fixture(scope="module")
def console(real_site: Path) -> str:
    """The page's console block as plain text."""
    page = (real_site / "concepts" / "get-started.html").read_text()
    blocks = re.findall(r'<div class="language-console highlight">(.*?)</div>', page, re.S)
    texts = [html.unescape(re.sub(r"<[^>]+>", "", block)) for block in blocks]
    (text,) = (t for t in texts if PROMPT in t)
    return text


def run(console: str, args: list[str]) -> str:
    """What the page shows for ``args``: its command line, then its output up to the next command."""
    commands = [f"{PROMPT}{chunk}" for chunk in console.split(PROMPT)[1:]]
    (out,) = (c.strip() for c in commands if c.splitlines()[0] == f"{PROMPT}{' '.join(args)}")
    return out


def test_compile_only_prints_target_cache_resources_and_sass_without_a_gpu(console: str) -> None:
    out = run(console, COMMANDS[0])
    assert "elementwise_add [cute] n134217728-bfloat16" in out and "-> sm_90a (compile: --compile-only)" in out
    assert "compile: " in out and "regs/thread" in out and "stack 0 B" in out
    assert "ldg_128" in out and "stg_128" in out  # the full tiles' 128-bit accesses the page names


def test_a_new_size_and_dtype_take_shape_flags(console: str) -> None:
    assert "n1000-float32" in run(console, COMMANDS[1])


def test_check_without_a_gpu_is_one_line_and_exit_2(console: str) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: --check runs instead of refusing")
    out = run(console, COMMANDS[2])
    assert out.endswith("[exit status 2]") and "error: no CUDA GPU" in out and "--compile-only" in out
