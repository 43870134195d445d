"""``named_barrier_pingpong.py`` with a fresh pair of named barriers for every round: the SMEM slot is
still reused, the barriers are not.

The ping-pong kernel reuses its two barriers every round, and racecheck reported a race on its slot.
Two explanations fit that report: racecheck does not follow a load released by ``bar.arrive`` into
the other side's later store, or it loses track of hand-offs when the same barrier is used again.
Here round ``r`` hands the slot forward on barrier ``1 + r`` and back on barrier ``1 + ROUNDS + r``,
so no barrier is used twice. If racecheck still reports the slot, the first explanation stands; if
it does not, the reuse was what it could not follow.

The arithmetic is the ping-pong kernel's, over ROUNDS = 7 rounds (7 + 6 barriers, ids 1-13 of the
15 a CTA has besides barrier 0): ``y = x_reversed * ROUNDS (ROUNDS + 1) / 2``.
"""

from __future__ import annotations

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import fake_dynamic_tensor, to_cute_dynamic
from snippets.gpu.named_barrier_handoff import WARPGROUP, HandoffPlan

ROUNDS = 7  # rounds per CTA; 2 * ROUNDS - 1 barriers, one per hand-off
THREADS = 2 * WARPGROUP  # both warpgroups take part in every hand-off


# --8<-- [start:kernel]
class Relay:
    """y = x_reversed * ROUNDS (ROUNDS + 1) / 2 through one SMEM slot; every hand-off on its own barrier."""

    @cute.jit
    def __call__(self, x: cute.Tensor, y: cute.Tensor, stream: cuda.CUstream) -> None:
        self.kernel(x, y).launch(grid=[x.shape[0] // WARPGROUP, 1, 1], block=[THREADS, 1, 1], stream=stream)

    @cute.kernel
    def kernel(self, x: cute.Tensor, y: cute.Tensor) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        block, _, _ = cute.arch.block_idx()
        lane = tidx % WARPGROUP
        slot = cutlass.memory.SmemAllocator().allocate_tensor(
            cutlass.Float32, cute.make_layout(WARPGROUP), byte_alignment=16
        )
        if tidx >= WARPGROUP:  # warpgroup 1: writes every round
            value = x[block * WARPGROUP + lane]
            for r in cutlass.range(ROUNDS, unroll=1):
                if r > 0:  # the reader released round r - 1 on its own barrier
                    cute.arch.barrier(barrier_id=ROUNDS + r, number_of_threads=THREADS)
                slot[lane] = value * cutlass.Float32(r + 1)
                cute.arch.barrier_arrive(barrier_id=1 + r, number_of_threads=THREADS)
        else:  # warpgroup 0: reads every round
            acc = cutlass.Float32(0.0)
            for r in cutlass.range(ROUNDS, unroll=1):
                cute.arch.barrier(barrier_id=1 + r, number_of_threads=THREADS)
                acc += slot[WARPGROUP - 1 - lane]
                if r < ROUNDS - 1:
                    cute.arch.barrier_arrive(barrier_id=ROUNDS + 1 + r, number_of_threads=THREADS)
            y[block * WARPGROUP + lane] = acc


# --8<-- [end:kernel]


class RelayPlan(HandoffPlan):
    name = "named_barrier_relay"
    description = (
        "The ping-pong hand-off through one SMEM slot over 7 rounds, each hand-off on a barrier of its own "
        "(ids 1-13): the slot is reused, no barrier is"
    )

    def reference_fn(self, inputs: Tensors) -> Tensors:
        x = inputs["x"].double().view(-1, WARPGROUP).flip(1).reshape(-1)
        return {"y": x * (ROUNDS * (ROUNDS + 1) // 2)}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        return ROUNDS * shape["n"], 2 * 4 * shape["n"]

    def plan(self, config: Config) -> CuteKernel:
        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return tuple(fake_dynamic_tensor(cutlass.Float32, (WARPGROUP,)) for _ in range(2))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return to_cute_dynamic(inputs["x"], (WARPGROUP,)), to_cute_dynamic(outputs["y"], (WARPGROUP,))

        return CuteKernel(
            host_fn=Relay(),
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: 4 * WARPGROUP,
        )


PLANS = (RelayPlan,)
