"""elementwise_add: its reference against a naive loop, its shape limits, its flop/byte counts,
the thread-to-element mapping of its tiled copy, and its SASS (vector path and predicated tail)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import torch

from mla_var3.kernel.cute_python.elementwise.add.vectorized.plan import ElementwiseAddPlan
from mla_var3.kernel.errors import UnsupportedShapeError


def test_reference_matches_a_naive_loop() -> None:
    plan = ElementwiseAddPlan("bfloat16")
    a, b = torch.randn(37).bfloat16(), torch.randn(37).bfloat16()
    ref = plan.reference_fn({"a": a, "b": b})["c"]
    naive = torch.tensor([float(x) + float(y) for x, y in zip(a, b, strict=True)], dtype=torch.float64)
    assert ref.dtype == torch.float64 and torch.equal(ref, naive)


@pytest.mark.parametrize(("n", "message"), [(0, "needs --n >= 1, got 0"), (1 << 31, "needs --n <= 2147483647")])
def test_shape_limits(n: int, message: str) -> None:
    with pytest.raises(UnsupportedShapeError, match=message):
        ElementwiseAddPlan().check_shape({"n": n})


def test_roofline_counts_read_two_write_one() -> None:
    assert ElementwiseAddPlan("float32")._algorithmic_flops_bytes({"n": 1000}) == (1000, 12000)
    assert ElementwiseAddPlan("bfloat16")._algorithmic_flops_bytes({"n": 1000}) == (1000, 6000)


def test_thread_t_owns_vector_t_of_every_slice() -> None:
    """The tiled copy the kernel builds (thread layout x value layout, a 128-bit atom), run as
    layout algebra on the CPU: thread t's copies start at t * vec + r * threads * vec."""
    import cutlass
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.elementwise.add.vectorized.kernel import MAX_COPY_BITS

    threads, vec, ilp = 8, MAX_COPY_BITS // 16, 3
    owned: dict[int, list[int]] = {}

    @cute.jit
    def partition() -> None:
        atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.BFloat16, num_bits_per_copy=MAX_COPY_BITS)
        tiled = cute.make_tiled_copy_tv(atom, cute.make_layout(threads), cute.make_layout(vec))
        coords = cute.make_identity_tensor((threads * vec * ilp,))
        for t in cutlass.range_constexpr(threads):
            mine = tiled.get_slice(t).partition_S(coords)
            owned[t] = [mine[i][0] for i in range(cute.size(mine))]

    cute.compile(partition)
    for t, elements in owned.items():
        assert elements == [t * vec + r * threads * vec + v for r in range(ilp) for v in range(vec)]
    assert sorted(e for es in owned.values() for e in es) == list(range(threads * vec * ilp))


def test_sass_has_the_vector_path_and_the_predicated_tail() -> None:
    from mla_var3.analysis.sass import disassemble
    from mla_var3.kernel.compile_cache import compile_cached

    plan = ElementwiseAddPlan("bfloat16")
    config = plan.default_config()
    first = compile_cached(plan, config, {"n": 1000003}, "sm_90a", need_function=False)
    ops = Counter(re.findall(r"\b((?:LDG|STG)\.E\S*)", disassemble(first.compiled.cubin)))
    # Full tiles: ilp 128-bit loads per input and ilp stores per thread; the tail: one element
    # per copy (8 bf16 per vector) under the predicate.
    assert (ops["LDG.E.128"], ops["STG.E.128"]) == (2 * config["ilp"], config["ilp"])
    assert (ops["LDG.E.U16"], ops["STG.E.U16"]) == (2 * 8 * config["ilp"], 8 * config["ilp"])
    # The length is dynamic: any other n is served by the same entry.
    assert compile_cached(plan, config, {"n": 1}, "sm_90a", need_function=False).source in ("memory", "disk")
