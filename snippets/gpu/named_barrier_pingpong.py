"""The named-barrier hand-off of ``named_barrier_handoff.py``, repeated: one SMEM slot reused for
several rounds, as the MLA seesaw reuses its rescale-factor slots for every pair of KV blocks.

Reuse needs the reverse hand-off too. Warpgroup 1 writes the slot and ``arrive``s on READY;
warpgroup 0 waits on READY, reads the slot, and ``arrive``s on CONSUMED; warpgroup 1 waits on
CONSUMED before it overwrites the slot for the next round. Every write is ordered before the read
of its round (READY) and every read before the next round's write (CONSUMED), so the kernel is
race-free by the PTX memory model. ``compute-sanitizer --tool racecheck`` on it tells whether the
tool follows a barrier hand-off in both directions when the same barriers and slot are used again;
the one-round kernels showed it follows the forward one.

Each CTA moves one 128-element fp32 tile: in round ``r`` the writer stores ``(r + 1) x`` (reversed
across lanes, so every thread reads another thread's element) and the reader accumulates it, so
``y = x_reversed * ROUNDS (ROUNDS + 1) / 2``.
"""

from __future__ import annotations

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import fake_dynamic_tensor, to_cute_dynamic
from snippets.gpu.named_barrier_handoff import WARPGROUP, HandoffPlan

ROUNDS = 8  # reuses of the slot per CTA
READY, CONSUMED = 1, 2  # named barriers (0 is the CTA-wide barrier)


# --8<-- [start:kernel]
class PingPong:
    """y = x_reversed * ROUNDS (ROUNDS + 1) / 2 through one SMEM slot reused ROUNDS times."""

    @cute.jit
    def __call__(self, x: cute.Tensor, y: cute.Tensor, stream: cuda.CUstream) -> None:
        self.kernel(x, y).launch(
            grid=[x.shape[0] // WARPGROUP, 1, 1], block=[2 * WARPGROUP, 1, 1], stream=stream
        )

    @cute.kernel
    def kernel(self, x: cute.Tensor, y: cute.Tensor) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        block, _, _ = cute.arch.block_idx()
        lane = tidx % WARPGROUP
        slot = cutlass.memory.SmemAllocator().allocate_tensor(
            cutlass.Float32, cute.make_layout(WARPGROUP), byte_alignment=16
        )
        ready = pipeline.NamedBarrier(barrier_id=READY, num_threads=2 * WARPGROUP)
        consumed = pipeline.NamedBarrier(barrier_id=CONSUMED, num_threads=2 * WARPGROUP)
        if tidx >= WARPGROUP:  # warpgroup 1: writes every round
            value = x[block * WARPGROUP + lane]
            for r in cutlass.range(ROUNDS, unroll=1):
                if r > 0:
                    consumed.arrive_and_wait()  # the reader is done with the last round's slot
                slot[lane] = value * cutlass.Float32(r + 1)
                ready.arrive()  # this round's slot is written
        else:  # warpgroup 0: reads every round
            acc = cutlass.Float32(0.0)
            for r in cutlass.range(ROUNDS, unroll=1):
                ready.arrive_and_wait()
                acc += slot[WARPGROUP - 1 - lane]  # another thread's element
                if r < ROUNDS - 1:
                    consumed.arrive()  # the slot may be overwritten
            y[block * WARPGROUP + lane] = acc


# --8<-- [end:kernel]


class PingPongPlan(HandoffPlan):
    name = "named_barrier_pingpong"
    description = (
        "A warpgroup hand-off through one SMEM slot reused 8 times: bar.arrive after each write, "
        "bar.arrive after each read, each side waiting on the other's barrier"
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
            host_fn=PingPong(),
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: 4 * WARPGROUP,
        )


PLANS = (PingPongPlan,)
