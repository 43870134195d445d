"""The CPU-side precompile that fills a compile cache for a GPU call (mla_var3.kernel.precompile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mla_var3.kernel import precompile
from mla_var3.kernel.errors import UserError


def test_a_group_expands_to_its_cute_members_at_each_matching_shape() -> None:
    jobs = precompile.jobs(["groups/copy_vector_width"])
    assert [kernel for kernel, _, _ in jobs] == [
        "copy_vec32",
        "copy_vec64",
        "copy_vec128",
    ]  # copy_torch compiles nothing
    assert {dtype for _, dtype, _ in jobs} == {"float32"}
    assert jobs[0][2] == {"n": 67108864}


def test_repeated_targets_compile_once() -> None:
    spec = "copy_vec128/n67108864-float32"
    assert len(precompile.jobs([spec, "groups/copy_vector_width", spec])) == 3


def test_test_module_shapes_are_read_for_each_kernel() -> None:
    jobs = precompile.jobs(["tests/test_mla_decode_v5.py:GPU_SHAPES@mla_decode_v6,mla_decode_v7@float16"])
    from test_mla_decode_v5 import GPU_SHAPES

    assert len(jobs) == 2 * len(GPU_SHAPES)
    assert {k for k, _, _ in jobs} == {"mla_decode_v6", "mla_decode_v7"}


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("groups/copy_vector_width/n1-*", "no shape of group copy_vector_width matches"),
        ("tests/test_nothing_here.py:SHAPES@copy_vec128@float32", "no test module"),
        ("tests/test_mla_decode_v5.py:GPU_SHAPES", "tests/<file>.py:<ATTR>@<kernel>"),
        ("copy_vec128", "a target is"),
    ],
)
def test_bad_targets_say_what_to_write(spec: str, says: str) -> None:
    with pytest.raises(UserError, match=says):
        precompile.jobs([spec])


def test_cli_fills_the_cache_and_a_second_run_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mla_var3.kernel import compile_cache

    target = "elementwise_add/n4096-float32"
    compile_cache.clear_memory_cache()  # another test in this worker may hold it in memory
    assert precompile.main(["--cache-dir", str(tmp_path), target]) == 0
    assert capsys.readouterr().out.startswith("compile ")
    assert any(tmp_path.glob("*/kernel.cubin"))
    compile_cache.clear_memory_cache()
    assert precompile.main(["--cache-dir", str(tmp_path), target]) == 0
    assert capsys.readouterr().out.startswith("disk ")


def test_cli_refuses_a_shape_the_kernel_cannot_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert precompile.main(["--cache-dir", str(tmp_path), "named_barrier_arrive/n1-float32"]) == 2
    assert "needs --n >= 128" in capsys.readouterr().err
