"""The get-started page's command session: what it states about the CLI's output holds."""

from __future__ import annotations

import pytest

from snippets.cpu.get_started import COMMANDS, run


def test_compile_only_prints_target_cache_resources_and_sass_without_a_gpu() -> None:
    out = run(COMMANDS[0])
    assert "elementwise_add [cute] n134217728-bfloat16" in out and "-> sm_90a (compile: --compile-only)" in out
    assert "compile: " in out and "regs/thread" in out and "stack 0 B" in out
    assert "ldg_128" in out and "stg_128" in out  # the full tiles' 128-bit accesses the page names


def test_a_new_size_and_dtype_take_shape_flags() -> None:
    assert "n1000-float32" in run(COMMANDS[1])


def test_check_without_a_gpu_is_one_line_and_exit_2() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: --check runs instead of refusing")
    out = run(COMMANDS[2])
    assert out.endswith("[exit status 2]") and "error: no CUDA GPU" in out and "--compile-only" in out
