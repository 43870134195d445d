"""Plan for ``cutlass_pdl_elementwise_add``: CUTLASS's tutorial ``programmatic_dependent_launch.py``.

Two dependent elementwise adds on one stream, ``w = u + v`` then ``y = w + x``, both launched with
the PDL attribute (``launch(..., use_pdl=True)``). The first kernel loads u and v, then executes
``griddepcontrol.launch_dependents`` (SASS ``PREEXIT``): once every CTA has, the second grid may
start. The second loads x, which does not depend on the first, then executes
``griddepcontrol.wait`` (SASS ``ACQBULK``) before it loads w. Configs: PDL on, PDL off (the same
kernels with the launch attribute unset: the wait returns at once and the second grid starts
after the first has finished), so one group can time both.

The tutorial compiles with ``--enable-tvm-ffi`` (the ``apache-tvm-ffi`` package) and calls the
compiled functions with torch tensors; so does this plan, through one host function that
launches both kernels (:mod:`.host`). fp32 only, as the tutorial; every extent dynamic
(``mark_layout_dynamic()``), so one binary serves every shape. Default shape: the tutorial's
argparse default, 256 x 256, where launch latency, not bandwidth, bounds each kernel.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, randn

EXAMPLE = "examples/python/CuTeDSL/dsl_tutorials/programmatic_dependent_launch.py"
MAX_EXTENT = 2**31 - 1


class CutlassPdlElementwiseAddPlan(KernelPlan):
    name = "cutlass_pdl_elementwise_add"
    description = (
        "CUTLASS's dsl_tutorials/programmatic_dependent_launch.py: two dependent elementwise adds, the second "
        "launched early with PDL (griddepcontrol.launch_dependents / wait)"
    )
    layer = "launch"
    archs = ("sm_90a",)
    dtypes = ("float32",)
    backend = "cute"
    shape_params = (
        ShapeParam("m", 256, "rows of u, v, w, x, y", 1, MAX_EXTENT),
        ShapeParam("n", 256, "columns of u, v, w, x, y", 1, MAX_EXTENT),
    )
    check_shapes = ({"m": 256, "n": 256}, {"m": 1000, "n": 1000}, {"m": 8192, "n": 8192})
    static_shape_params = ()

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if importlib.util.find_spec("tvm_ffi") is None:
            return "apache-tvm-ffi is not installed (the tutorial compiles with --enable-tvm-ffi): pip install apache-tvm-ffi"
        return None

    def _autotune_configs(self) -> list[Config]:
        return [{"use_pdl": True}, {"use_pdl": False}]

    def tolerance(self) -> float:
        return 1e-6  # two fp32 additions, the same order as the reference

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {name: randn((shape["m"], shape["n"]), self.dtype) for name in ("u", "v", "x")}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {name: torch.empty_like(inputs["u"]) for name in ("w", "y")}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        w = inputs["u"] + inputs["v"]
        return {"w": w, "y": w + inputs["x"]}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        elements = shape["m"] * shape["n"]
        # The pair as two kernels: u, v read and w written; w, x read and y written.
        return 2 * elements, 6 * elements * element_size(self.dtype)

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_fake_tensor

        from mla_var3.kernel.cute_python.launch.cutlass_pdl.imported.host import DependentAdds
        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        host = DependentAdds(example.elementwise_add, config["use_pdl"])

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            # from_dlpack(t).mark_layout_dynamic() of a row-major fp32 tensor: (?,?):(?{i64},1).
            return tuple(
                make_fake_tensor(cutlass.Float32, (cute.sym_int(), cute.sym_int()), (cute.sym_int64(), 1))
                for _ in range(5)
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            # Compiled with --enable-tvm-ffi, the function takes torch tensors, as in the tutorial.
            return (inputs["u"], inputs["v"], outputs["w"], inputs["x"], outputs["y"])

        return ExampleKernel(
            host_for=lambda shape: host,
            compile_args=compile_args,
            launch_args=launch_args,
            options="--enable-tvm-ffi",
        )


__all__ = ["EXAMPLE", "CutlassPdlElementwiseAddPlan"]
