"""``mla_decode_v6`` (v5 + 64-bit stores of the split partials) and ``mla_decode_v7`` (v6 + a combine
whose split weights are computed once into SMEM): on the CPU both compile for sm_90a without spills,
v6's attention kernel stores each partial pair in one ``STG.E.64`` (v5: one ``STG.E`` per value) with
v5's WGMMA shapes, and v7's combine loop reads weights from SMEM and takes no ``exp2`` per split. v7
refuses a split count over its SMEM table. On an H200 both match the fp32 reference at v5's shapes.
"""

from __future__ import annotations

import re

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.registry import get_plan
from mla_var3.kernel.workloads.mla import mla_shape

SM90A = Arch.parse("sm_90a")
B1 = mla_shape(b=1, t=8192, h=128)  # the latency shape: 66 splits of two blocks


def _sass(name: str) -> dict[str, list[str]]:
    from mla_var3.analysis.sass import disassemble
    from mla_var3.kernel.compile_cache import compile_cached

    plan = get_plan(name)("bfloat16")
    cubin = compile_cached(plan, plan.default_config(), B1, SM90A, need_function=False).compiled.cubin
    kernels: dict[str, list[str]] = {}
    current = None
    for line in disassemble(cubin).splitlines():
        if m := re.match(r"\s*\.text\.kernel_cutlass_(\w+?)_kernel", line):
            current = m.group(1)
            kernels.setdefault(current, [])
        elif current:
            kernels[current].append(line)
    return kernels


def _ops(lines: list[str], pattern: str) -> int:
    return sum(bool(re.search(pattern, line)) for line in lines)


@pytest.fixture(scope="module")
def sass() -> dict[str, dict[str, list[str]]]:
    return {name: _sass(name) for name in ("mla_decode_v5", "mla_decode_v6", "mla_decode_v7")}


def test_v6_stores_the_partial_in_pairs(sass) -> None:
    v5, v6 = sass["mla_decode_v5"]["attention"], sass["mla_decode_v6"]["attention"]
    assert _ops(v5, r"STG\.E ") == 130 and _ops(v5, r"STG\.E\.64") == 0  # 128 values + 2 LSE per thread
    assert _ops(v6, r"STG\.E\.64") == 64 and _ops(v6, r"STG\.E ") == 2
    hgmma = r"HGMMA\.64x(64|256)x16"
    assert _ops(v6, hgmma) == _ops(v5, hgmma) == 2 * (72 + 8)  # the seesaw is untouched


def test_v7_combine_takes_weights_from_smem(sass) -> None:
    combine = sass["mla_decode_v7"]["combine_weights"]
    assert _ops(combine, r"LDS") >= 1 and _ops(combine, r"LDG\.E\.128") >= 8
    assert _ops(combine, r"MUFU\.EX2") == 5  # one per LSE a lane holds (MAX_SPLITS / 32), none per split
    assert _ops(combine, r"ACQBULK") == 1, "no griddepcontrol.wait: the PDL combine would race"


def test_no_spills() -> None:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.kernel.compile_cache import compile_cached

    for name in ("mla_decode_v6", "mla_decode_v7"):
        plan = get_plan(name)("bfloat16")
        cubin = compile_cached(plan, plan.default_config(), B1, SM90A, need_function=False).compiled.cubin
        usage = resource_usage(cubin)
        assert len(usage) == 2
        for k in usage:
            assert k.local_bytes == 0 and k.stack_bytes == 0, (name, k)


def test_v7_refuses_more_splits_than_its_table(monkeypatch) -> None:
    from mla_var3.kernel.cute_python.mla.decode import plan_common

    monkeypatch.setattr(plan_common, "_device_sm_count", lambda: 400)  # 400 SMs: 200 splits of 256 blocks
    long = mla_shape(b=1, t=16384, h=128)
    with pytest.raises(UnsupportedShapeError, match="200 KV splits exceed the combine's table of 160"):
        get_plan("mla_decode_v7")("bfloat16").validate_shape(long)
    get_plan("mla_decode_v6")("bfloat16").validate_shape(long)  # v6's combine has no table


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["mla_decode_v6", "mla_decode_v7"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_matches_reference_on_gpu(name: str, dtype: str) -> None:
    from test_mla_decode_cute import check_on_gpu
    from test_mla_decode_v5 import GPU_SHAPES

    check_on_gpu(name, dtype, GPU_SHAPES)
