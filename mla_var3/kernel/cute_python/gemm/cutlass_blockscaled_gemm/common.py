"""What the three imported block-scaled GEMM plans share: the workload, its configs, and the operands.

CUTLASS's ``dense_blockscaled_gemm_persistent.py``, ``..._prefetch.py`` and ``..._amax.py`` (folder
``examples/python/CuTeDSL/cute/blackwell/kernel/blockscaled_gemm/`` at the pinned commit) compute
C = (A * SFA) @ (B * SFB)^T on SM100 with ``tcgen05.mma`` of a block-scaled kind: A (M, K) and B
(N, K) K-major in a narrow format, one scale factor per 16 or 32 elements along K, C (M, N)
row-major. :class:`BlockScaledGemmPlan` is that workload: inputs are normally distributed values
quantized to the config's format (:mod:`.quant`), the reference multiplies their dequantized
values in fp32. The plan's dtype is C's; the operand format is part of the config: the
docstring command's first (e2m1 elements, e8m0 scales per 16), then MXF8 and NVF4.

The persistent example takes pointers and the problem shape as dynamic integers (its newer
API); the prefetch and amax examples take tensors marked as in their ``run()``
(:class:`TensorApiBlockScaledGemmPlan`). Both build the example's kernel object alike, but for
the prefetch example's extra argument. Compile-only: no SM100 GPU here; the workload
methods are real, so a B200 could run the plans as they are.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT, ExampleKernel
from mla_var3.kernel.cute_python.gemm.common import GEMM_SHAPE_PARAMS
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.operands import (
    batched,
    fake_batched,
    nibble_storage,
    pack_nibbles,
    unpack_nibbles,
)
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.quant import (
    FORMATS,
    BlockScaledFormat,
    dequantize,
    quantize,
    sf_from_atoms,
    sf_to_atoms,
)
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size, randn

EXAMPLES_DIR = "examples/python/CuTeDSL/cute/blackwell/kernel/blockscaled_gemm"
# --8<-- [start:configs]
# The docstring's command (e2m1 elements with e8m0 scales per 16 along K; 2-CTA 256x128 MMA on a 2x1
# cluster), then MXF8 (e4m3 elements, e8m0 scales per 32) on one CTA, 128x128, then NVF4 (e2m1, e4m3
# scales per 16) on the docstring's tile.
CONFIGS: tuple[Config, ...] = (
    {"format": "mxf4_v16", "mma_tiler_mn": (256, 128), "cluster_shape_mn": (2, 1)},
    {"format": "mxf8", "mma_tiler_mn": (128, 128), "cluster_shape_mn": (1, 1)},
    {"format": "nvf4", "mma_tiler_mn": (256, 128), "cluster_shape_mn": (2, 1)},
)
# --8<-- [end:configs]
# The docstring's problem: 8192 x 8192 x 1024 (its L = 1).
SHAPE_PARAMS: tuple[ShapeParam, ...] = tuple(
    ShapeParam(p.name, {"k": 1024}.get(p.name, p.default), p.help, p.minimum, p.maximum)
    for p in GEMM_SHAPE_PARAMS
)
# Elements per 16 bytes along K for the TMA rows, and the K granule of the scale atoms.
K_MULTIPLE = 128  # 4 scale factors x 32 elements: a whole scale atom per row (also 16 B for fp4)


class BlockScaledGemmPlan(KernelPlan):
    """C = (A * SFA) @ (B * SFB)^T for one block-scaled format; a variant names its example."""

    layer = "gemm"
    archs = ("sm_100a",)
    dtypes = ("float16", "bfloat16")
    backend = "cute"
    shape_params = SHAPE_PARAMS
    check_shapes = ({"m": 256, "n": 256, "k": 256}, {"m": 1000, "n": 1048, "k": 512})
    static_shape_params = ()  # every extent is dynamic in all three examples
    data_distribution = (
        "A and B standard normal (fp32) quantized to the config's format, one scale per block along K "
        "(e8m0: a power of two; e4m3: amax / max rounded); the reference multiplies the dequantized values"
    )
    example_file: ClassVar[str]

    @classmethod
    def upstream_example(cls) -> str:
        return f"{EXAMPLES_DIR}/{cls.example_file}"

    def validate_shape(self, shape: Shape) -> None:
        if shape["k"] % K_MULTIPLE:
            raise UnsupportedShapeError(
                f"{self.name} needs --k (={shape['k']}) to be a multiple of {K_MULTIPLE} (whole scale-factor "
                "atoms per row); pad K with zeros"
            )
        if shape["n"] % 8:
            raise UnsupportedShapeError(
                f"{self.name} needs --n (={shape['n']}) to be a multiple of 8 (16-byte rows of C)"
            )

    def _autotune_configs(self) -> list[Config]:
        return [dict(config) for config in CONFIGS]

    def tolerance(self) -> float:
        return 1e-3 if self.dtype == "float16" else 5e-3  # products of exact values; C's rounding dominates

    def _format(self, config: Config | None = None) -> BlockScaledFormat:
        return FORMATS[(config or self.default_config())["format"]]

    def prepare_inputs(self, shape: Shape) -> Tensors:

        fmt = self._format()
        inputs: Tensors = {}
        for name, rows in (("a", shape["m"]), ("b", shape["n"])):
            q, scales = quantize(randn((rows, shape["k"]), "float32"), fmt)
            inputs[name] = pack_nibbles(q) if fmt.bits == 4 else q
            inputs[f"sf{name}"] = sf_to_atoms(scales).to(fmt.torch_scale)
        return inputs

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        from mla_var3.kernel.tensors import torch_dtype

        return {
            "c": torch.empty(
                (shape["m"], shape["n"]), dtype=torch_dtype(self.dtype), device=inputs["a"].device
            )
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        a, b = (self._dequantized(inputs, name) for name in ("a", "b"))
        return {"c": a @ b.T}

    def _dequantized(self, inputs: Tensors, name: str) -> Any:
        fmt = self._format()
        q = inputs[name]
        codes = unpack_nibbles(q) if fmt.bits == 4 else q
        rows, k = codes.shape
        scales = sf_from_atoms(inputs[f"sf{name}"].float(), rows, k // fmt.vec)
        return dequantize(codes, scales, fmt)

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n, k = shape["m"], shape["n"], shape["k"]
        fmt = self._format()
        operands = (m + n) * k * fmt.bits // 8 + (m + n) * (k // fmt.vec)
        return 2 * m * n * k, operands + m * n * element_size(self.dtype)

    # --- the example's side -----------------------------------------------------------------
    def kernel_object(self, example: Any, config: Config) -> Any:
        """The example's GEMM object for ``config`` (the prefetch example takes one argument more)."""
        return example.Sm100BlockScaledPersistentDenseGemmKernel(
            self._format(config).vec, tuple(config["mma_tiler_mn"]), tuple(config["cluster_shape_mn"])
        )

    def example_accepts(self, example: Any, shape: Shape, config: Config) -> bool:
        """The example's own ``can_implement`` for this problem (K-major A/B, N-major C)."""
        raise NotImplementedError

    def compile_operands(self, fmt: BlockScaledFormat) -> tuple[Any, ...]:
        """The example's leading arguments, tensor-free."""
        raise NotImplementedError

    def launch_operands(self, fmt: BlockScaledFormat, inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
        """The same arguments from real tensors."""
        raise NotImplementedError

    def plan(self, config: Config) -> ExampleKernel:
        from mla_var3.kernel.upstream import load_example

        example = load_example(self.upstream_example())
        fmt = self._format(config)
        gemm = self.kernel_object(example, config)
        cluster = tuple(config["cluster_shape_mn"])
        # max_active_clusters: a B200's SMs over the cluster size (run() asks HardwareInfo, which needs a GPU).
        max_active_clusters = B200_SM_COUNT // (cluster[0] * cluster[1])

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            if not self.example_accepts(example, shape, config):
                raise UnsupportedShapeError(
                    f"{self.upstream_example()} cannot implement {shape} with {config}; pick another --config or shape"
                )
            return (*self.compile_operands(fmt), max_active_clusters)

        return ExampleKernel(
            host_for=lambda shape: gemm,
            compile_args=compile_args,
            launch_args=lambda inputs, outputs: self.launch_operands(fmt, inputs, outputs),
            options="--opt-level 2",  # the prefetch and amax examples' run(); the persistent one's default
        )

    def c_type(self) -> Any:
        return cute_dtype(self.dtype)


class TensorApiBlockScaledGemmPlan(BlockScaledGemmPlan):
    """The prefetch and amax examples' side: ``can_implement`` and ``__call__`` in their older API,
    A, B, their scales and C as tensors marked as in their ``run()``."""

    def example_accepts(self, example: Any, shape: Shape, config: Config) -> bool:
        fmt = self._format(config)
        element, scale = fmt.cute_types()
        return bool(
            example.Sm100BlockScaledPersistentDenseGemmKernel.can_implement(
                element,
                scale,
                fmt.vec,
                self.c_type(),
                tuple(config["mma_tiler_mn"]),
                tuple(config["cluster_shape_mn"]),
                shape["m"],
                shape["n"],
                shape["k"],
                1,
                "k",
                "k",
                "n",
            )  # fmt: skip
        )

    def compile_operands(self, fmt: BlockScaledFormat) -> tuple[Any, ...]:
        return fake_tensor_operands(fmt, self.c_type())

    def launch_operands(self, fmt: BlockScaledFormat, inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
        return tensor_operands(fmt, inputs, outputs)


def fake_tensor_operands(fmt: BlockScaledFormat, c_type: Any) -> tuple[Any, ...]:
    """(a, b, sfa, sfb, c) typed as the prefetch/amax examples' ``run()`` marks them."""
    element, scale = fmt.cute_types()
    div = 32 if fmt.bits == 4 else 16  # run() marks every operand with this divisibility
    return (
        fake_batched(element, divisibility=div),
        fake_batched(element, divisibility=div),
        fake_batched(scale),
        fake_batched(scale),
        fake_batched(c_type, divisibility=div),
    )


def tensor_operands(fmt: BlockScaledFormat, inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
    """(a, b, sfa, sfb, c) from real tensors, marked as :func:`fake_tensor_operands` types them."""
    import torch

    element, scale = fmt.cute_types()
    div = 32 if fmt.bits == 4 else 16
    a, b = (
        nibble_storage(inputs[name]) if fmt.bits == 4 else inputs[name].view(torch.uint8)
        for name in ("a", "b")
    )
    # The kernel rebuilds the scale layout from the pointer (tile_atom_to_shape_SF): any view will do.
    sfa, sfb = (inputs[name].reshape(-1, 4).view(torch.uint8) for name in ("sfa", "sfb"))
    return (
        batched(a, divisibility=div, element_type=element),
        batched(b, divisibility=div, element_type=element),
        batched(sfa, element_type=scale),
        batched(sfb, element_type=scale),
        batched(outputs["c"], divisibility=div),
    )


__all__ = [
    "CONFIGS",
    "EXAMPLES_DIR",
    "BlockScaledGemmPlan",
    "TensorApiBlockScaledGemmPlan",
    "fake_tensor_operands",
    "tensor_operands",
]
