"""Copy bandwidth by access width: one copy kernel whose threads load and store 32, 64 or 128 bits at a time.

Every width moves the same bytes with the same grid, the same threads and the same bytes per
thread (:data:`BYTES_PER_THREAD`); only the width of each access changes, so the 32-bit copy
issues four times as many load and store instructions as the 128-bit one (``LDG.E``,
``LDG.E.64``, ``LDG.E.128`` in the SASS). ``copy_torch`` (``dst.copy_(src)``) is the baseline
every reader already trusts. Comparison groups: ``copy_vector_width`` (the four, DRAM-resident)
and ``l2_vs_dram`` (``copy_vec128`` on a working set that fits the L2, warm against cold).

The kernel is the tiled-copy idiom of CUTLASS's elementwise example
(``examples/python/CuTeDSL/cute/ampere/kernel/elementwise/elementwise_add.py``): a copy atom of
the chosen width, a thread layout and a value layout make a tiled copy, each thread partitions
its CTA's tile with its slice. The length is dynamic, a multiple of the CTA tile.
"""

from __future__ import annotations

from typing import Any, ClassVar

import cuda.bindings.driver as cuda
import cutlass.cute as cute

from mla_var3.kernel.backends import CuteKernel, TorchKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, fake_dynamic_tensor, randn, to_cute_dynamic

THREADS = 256
BYTES_PER_THREAD = 64  # per CTA tile: 16 accesses of 32 bits, 8 of 64 or 4 of 128
TILE = THREADS * BYTES_PER_THREAD // 4  # fp32 elements per CTA tile (16 KiB)


# --8<-- [start:kernel]
class VectorCopy:
    """dst = src, ``bits`` per load and per store; the length is a multiple of the CTA tile."""

    def __init__(self, bits: int) -> None:
        self.bits = bits

    @cute.jit
    def __call__(self, src: cute.Tensor, dst: cute.Tensor, stream: cuda.CUstream) -> None:
        vec = self.bits // src.element_type.width  # elements per access
        atom = cute.make_copy_atom(
            cute.nvgpu.CopyUniversalOp(), src.element_type, num_bits_per_copy=self.bits
        )
        # Thread t moves vector t of every `THREADS * vec`-element slice of the tile.
        tiled_copy = cute.make_tiled_copy_tv(atom, cute.make_layout(THREADS), cute.make_layout(vec))
        gS = cute.zipped_divide(src, (TILE,))  # ((TILE,), (tiles,))
        gD = cute.zipped_divide(dst, (TILE,))
        self.kernel(gS, gD, tiled_copy).launch(
            grid=[cute.size(gD, mode=[1]), 1, 1], block=[THREADS, 1, 1], stream=stream
        )

    @cute.kernel
    def kernel(self, gS: cute.Tensor, gD: cute.Tensor, tiled_copy: cute.TiledCopy) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        thr_copy = tiled_copy.get_slice(tidx)
        tS = thr_copy.partition_S(gS[(None, bidx)])  # ((vec), slices)
        tD = thr_copy.partition_D(gD[(None, bidx)])
        fragment = cute.make_fragment_like(tS)
        cute.copy(tiled_copy, tS, fragment)  # every load in flight before the first store
        cute.copy(tiled_copy, fragment, tD)


# --8<-- [end:kernel]


def torch_copy(inputs: Tensors, outputs: Tensors) -> None:
    outputs["dst"].copy_(inputs["src"])


class CopyPlan(KernelPlan):
    """dst = src on fp32 vectors: the workload every member of the copy groups shares."""

    layer = "memory"
    archs = ("sm_90a",)
    dtypes = ("float32",)
    shape_params = (
        ShapeParam(
            "n", 1 << 26, f"fp32 elements per tensor, a multiple of {TILE} (default: 256 MiB)", minimum=TILE
        ),
    )
    check_shapes = ({"n": 37 * TILE}, {"n": TILE})
    static_shape_params = ()  # n is dynamic
    bits: ClassVar[int] = 128

    def validate_shape(self, shape: Shape) -> None:
        if shape["n"] % TILE:
            raise UnsupportedShapeError(
                f"{self.name} needs --n a multiple of {TILE} (the CTA tile), got {shape['n']}"
            )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"src": randn((shape["n"],), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"dst": torch.empty_like(inputs["src"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"dst": inputs["src"].double()}

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        return 0, 2 * shape["n"] * element_size(self.dtype)  # read once, write once

    def plan(self, config: Config) -> CuteKernel:
        import cutlass

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return fake_dynamic_tensor(cutlass.Float32, (TILE,)), fake_dynamic_tensor(
                cutlass.Float32, (TILE,)
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return to_cute_dynamic(inputs["src"], (TILE,)), to_cute_dynamic(outputs["dst"], (TILE,))

        return CuteKernel(host_fn=VectorCopy(self.bits), compile_args=compile_args, launch_args=launch_args)


class CopyVec32Plan(CopyPlan):
    name = "copy_vec32"
    description = "dst = src with one 32-bit load and store per access (LDG.E / STG.E)"
    bits = 32


class CopyVec64Plan(CopyPlan):
    name = "copy_vec64"
    description = "dst = src with 64-bit accesses (LDG.E.64 / STG.E.64)"
    bits = 64


class CopyVec128Plan(CopyPlan):
    name = "copy_vec128"
    description = "dst = src with 128-bit accesses (LDG.E.128 / STG.E.128)"
    bits = 128


class CopyTorchPlan(CopyPlan):
    name = "copy_torch"
    description = "dst.copy_(src) in PyTorch: the baseline of the copy micro-benchmarks"
    archs = ("sm_80", "sm_90", "sm_100f")  # torch runs on every major; one target per major
    backend = "torch"
    ncu_kernel_regex = "copy|elementwise"

    def plan(self, config: Config) -> TorchKernel:
        return TorchKernel(fn=torch_copy)


PLANS = (CopyVec32Plan, CopyVec64Plan, CopyVec128Plan, CopyTorchPlan)
