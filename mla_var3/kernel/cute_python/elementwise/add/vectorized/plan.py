"""Plan for ``elementwise_add``: C = A + B on 1-D tensors, the copy-bandwidth roofline kernel.

The length is dynamic (one binary per dtype and config serves every ``n``); the kernel
indexes with 32-bit integers, so ``n`` stays below 2**31.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size, fake_dynamic_tensor, randn, to_cute_dynamic

# Any length: no divisibility assumed (the tail is predicated).
ANY_LENGTH = (1,)


class ElementwiseAddPlan(KernelPlan):
    name = "elementwise_add"
    layer = "elementwise"
    description = "C = A + B with 128-bit vector copies and a predicated tail (any length)"
    archs = ("sm_80", "sm_90a", "sm_100a")
    dtypes = ("bfloat16", "float16", "float32")
    shape_params = (
        ShapeParam("n", 1 << 27, "elements per tensor (default: 256 MiB of bf16; int32 indexing)", minimum=1, maximum=2**31 - 1),
    )
    check_shapes = ({"n": 1000003}, {"n": 1}, {"n": 1 << 20})  # the first (full tiles + a tail) is the sanitizer shape
    static_shape_params = ()  # n is dynamic

    def prepare_inputs(self, shape: Shape) -> Tensors:
        n = shape["n"]
        return {"a": randn((n,), self.dtype), "b": randn((n,), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"c": torch.empty_like(inputs["a"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"c": inputs["a"].double() + inputs["b"].double()}

    def _autotune_configs(self) -> list[Config]:
        return [{"threads": 256, "ilp": 4}, {"threads": 128, "ilp": 8}, {"threads": 256, "ilp": 2}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        n = shape["n"]
        return n, 3 * n * element_size(self.dtype)

    def plan(self, config: Config) -> CuteKernel:
        from mla_var3.kernel.cute_python.elementwise.add.vectorized.kernel import VectorizedAdd

        dtype = cute_dtype(self.dtype)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return tuple(fake_dynamic_tensor(dtype, ANY_LENGTH) for _ in range(3))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return tuple(to_cute_dynamic(t, ANY_LENGTH) for t in (inputs["a"], inputs["b"], outputs["c"]))

        return CuteKernel(
            host_fn=VectorizedAdd(threads=config["threads"], ilp=config["ilp"]),
            compile_args=compile_args,
            launch_args=launch_args,
        )


__all__ = ["ElementwiseAddPlan"]
