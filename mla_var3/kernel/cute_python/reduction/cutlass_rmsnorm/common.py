"""What the two imported RMSNorm plans share: the workload and the adapter to CUTLASS's ``rmsnorm.py``.

``rmsnorm.py`` (``examples/python/CuTeDSL/cute/blackwell/kernel/rmsnorm/`` at the pinned commit)
computes y = x / sqrt(mean(x^2) + eps) * w over the rows of an (M, N) row-major x, with the
weight in x's type (its ``run()`` draws x and w from ``torch.randn``). Its row sum of squares
comes from ``reduce.py``'s ``row_reduce``: warp shuffles, then SMEM across warps, then, for long
rows on SM90+, a cluster of up to 16 CTAs that split the row and exchange partial sums through
distributed shared memory (``st.async`` into peer CTAs, completed on an mbarrier). N is compiled
in (the kernel takes raw pointers and builds (M, N) layouts itself); M is a runtime Int32.

**The SM version decides the cluster path, silently.** ``RMSNormConfig`` asks
``get_sm_version()``, which returns 80 when torch sees no GPU, and 80 means ``cluster_n = 1`` for
every N: compiled on a CPU machine, the example drops its cluster reduction without a word. The
plans here pass ``sm_version`` explicitly (90 for ``sm_90a``, 100 for ``sm_100a``) through the
config object ``RMSNormKernel`` accepts, and record it in the config. With 16-bit x the cluster
starts above N = 16384 (2 CTAs up to 32K, 4 up to 64K, 8 up to 128K, then 16); with fp32 above
32768. The example imports its helper as ``blackwell.kernel.reduce.reduce``, so
``examples/python/CuTeDSL/cute`` goes on ``sys.path``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size, randn

EXAMPLE = "examples/python/CuTeDSL/cute/blackwell/kernel/rmsnorm/rmsnorm.py"
EXTRA_PATHS = ("examples/python/CuTeDSL/cute",)  # rmsnorm.py imports blackwell.kernel.reduce.reduce
EPS = 1e-6  # the example's default
POINTER_ALIGN = 16  # bytes, as the example's compile (make_ptr(..., assumed_align=16)) assumes
MAX_EXTENT = 2**31 - 1


class CutlassRmsNormPlan(KernelPlan):
    """RMSNorm forward of CUTLASS's example for one SM version (which picks the cluster size)."""

    layer = "reduction"
    dtypes = ("bfloat16", "float16", "float32")
    backend = "cute"
    shape_params = (
        ShapeParam("m", 32768, "rows (tokens)", 1, MAX_EXTENT),
        ShapeParam("n", 4096, "row length (hidden size), compiled into the kernel", 1, 2**20),
    )
    # One shape per path: no cluster; a 4-CTA cluster (16-bit x) reducing through distributed SMEM.
    check_shapes = ({"m": 4096, "n": 4096}, {"m": 1000, "n": 65536})
    static_shape_params = ("n",)
    data_distribution = (
        "x and w standard normal in the plan's dtype (the example draws both with torch.randn)"
    )
    sm_version: ClassVar[int]

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        per_16b = 16 // element_size(self.dtype)
        if shape["n"] % per_16b:
            raise UnsupportedShapeError(
                f"{self.name} needs --n (={shape['n']}) to be a multiple of {per_16b} for {self.dtype} "
                "(128-bit copies per thread); pad N"
            )

    def _autotune_configs(self) -> list[Config]:
        return [{"sm_version": self.sm_version}]

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"x": randn((shape["m"], shape["n"]), self.dtype), "w": randn((shape["n"],), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"y": torch.empty_like(inputs["x"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        x = inputs["x"].float()
        return {"y": x * (x.square().mean(dim=-1, keepdim=True) + EPS).rsqrt() * inputs["w"].float()}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n = shape["m"], shape["n"]
        # x^2 and the sum (2 per element), the scale and the weight (2 per element); x read, y written once.
        return 4 * m * n, (2 * m * n + n) * element_size(self.dtype)

    def cluster_n(self, example: Any, n: int) -> int:
        """The cluster size the example picks for rows of ``n`` elements on this plan's SM version."""
        return example.RMSNormConfig(cute_dtype(self.dtype), n, True, sm_version=self.sm_version).cluster_n

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_ptr

        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE, extra_paths=EXTRA_PATHS)
        dtype = cute_dtype(self.dtype)

        def host_for(shape: Shape) -> Any:
            rms_config = example.RMSNormConfig(dtype, shape["n"], True, sm_version=config["sm_version"])
            return example.RMSNormKernel(dtype, shape["n"], True, config=rms_config)

        def pointer(address: int) -> Any:
            return make_ptr(dtype, address, cute.AddressSpace.gmem, assumed_align=POINTER_ALIGN)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            # As the example's get_compiled_kernel: representative pointers, M and eps as runtime scalars.
            return (pointer(16), pointer(16), pointer(16), cutlass.Int32(1), cutlass.Float32(EPS))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            x, w, y = inputs["x"], inputs["w"], outputs["y"]
            m = x.shape[0]
            return (
                pointer(x.data_ptr()),
                pointer(w.data_ptr()),
                pointer(y.data_ptr()),
                cutlass.Int32(m),
                cutlass.Float32(EPS),
            )

        return ExampleKernel(host_for=host_for, compile_args=compile_args, launch_args=launch_args)


__all__ = ["EPS", "EXAMPLE", "EXTRA_PATHS", "CutlassRmsNormPlan"]
