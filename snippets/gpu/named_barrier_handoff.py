"""A hand-off between two warpgroups through SMEM and a named barrier, as the MLA kernels' seesaw
does it, in two forms: the writer ``arrive``s (``bar.arrive``, it does not wait) or it
``arrive_and_wait``s (``bar.sync``) like the reader. Both are correct: a named barrier completes
when its thread count has arrived, and every write before a thread's arrival is visible to the
threads that waited on it (PTX ISA, ``bar``/``barrier``: "memory ordering"). The pair exists for
compute-sanitizer: its racecheck tool reported RAW hazards in ``mla_decode_v5`` between a factor
one warpgroup stores before ``bar.arrive`` and the other loads after ``bar.sync`` on the same
barrier -- these two kernels tell whether racecheck orders accesses across ``bar.arrive`` at all.

Each CTA moves one 128-element fp32 tile: warpgroup 1 writes ``2 x`` into SMEM and signals
barrier 1; warpgroup 0 waits on barrier 1, reads the tile and writes it to ``y``. Only the
writer's barrier call differs between the two plans.
"""

from __future__ import annotations

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import fake_dynamic_tensor, randn, to_cute_dynamic

WARPGROUP = 128  # threads per warpgroup, and elements per CTA tile
HANDOFF = 1  # the named barrier (0 is the CTA-wide barrier)


# --8<-- [start:kernel]
class Handoff:
    """y = 2 x, each tile written to SMEM by warpgroup 1 and read back by warpgroup 0."""

    def __init__(self, writer_waits: bool) -> None:
        self.writer_waits = writer_waits

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
        tile = cutlass.memory.SmemAllocator().allocate_tensor(
            cutlass.Float32, cute.make_layout(WARPGROUP), byte_alignment=16
        )
        handoff = pipeline.NamedBarrier(barrier_id=HANDOFF, num_threads=2 * WARPGROUP)
        if tidx >= WARPGROUP:  # warpgroup 1: the writer
            tile[lane] = 2.0 * x[block * WARPGROUP + lane]
            if cutlass.const_expr(self.writer_waits):
                handoff.arrive_and_wait()  # bar.sync: the writer waits for the reader too
            else:
                handoff.arrive()  # bar.arrive: signal and go on, as the seesaw's writers do
        else:  # warpgroup 0: the reader
            handoff.arrive_and_wait()
            y[block * WARPGROUP + lane] = tile[WARPGROUP - 1 - lane]  # another thread's element


# --8<-- [end:kernel]


class HandoffPlan(KernelPlan):
    """y = 2 x through one SMEM hand-off per CTA; ``writer_waits`` picks the writer's barrier call."""

    layer = "memory"
    archs = ("sm_90a",)
    dtypes = ("float32",)
    shape_params = (ShapeParam("n", 1 << 20, "elements, a multiple of 128", minimum=WARPGROUP),)
    check_shapes = ({"n": 3 * WARPGROUP},)
    static_shape_params = ()
    writer_waits = False

    def validate_shape(self, shape: Shape) -> None:
        if shape["n"] % WARPGROUP:
            raise UnsupportedShapeError(f"{self.name} needs --n a multiple of {WARPGROUP}, got {shape['n']}")

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"x": randn((shape["n"],), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"y": torch.empty_like(inputs["x"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        x = inputs["x"].double().view(-1, WARPGROUP).flip(1).reshape(-1)
        return {"y": 2.0 * x}

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        return shape["n"], 2 * 4 * shape["n"]

    def plan(self, config: Config) -> CuteKernel:
        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return fake_dynamic_tensor(cutlass.Float32, (WARPGROUP,)), fake_dynamic_tensor(
                cutlass.Float32, (WARPGROUP,)
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return to_cute_dynamic(inputs["x"], (WARPGROUP,)), to_cute_dynamic(outputs["y"], (WARPGROUP,))

        return CuteKernel(
            host_fn=Handoff(self.writer_waits),
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: 4 * WARPGROUP,
        )


class HandoffArrivePlan(HandoffPlan):
    name = "named_barrier_arrive"
    description = "A warpgroup hand-off through SMEM: the writer signals a named barrier with bar.arrive"


class HandoffSyncPlan(HandoffPlan):
    name = "named_barrier_sync"
    description = "A warpgroup hand-off through SMEM: the writer waits on the named barrier with bar.sync"
    writer_waits = True


PLANS = (HandoffArrivePlan, HandoffSyncPlan)
