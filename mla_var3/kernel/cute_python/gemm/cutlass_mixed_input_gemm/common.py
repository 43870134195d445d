"""What the two imported mixed-input GEMM plans share: narrow A, its scales, configs and operand marks.

CUTLASS's ``mixed_input_gemm.py`` and ``grouped_mixed_input_gemm.py`` (folder
``examples/python/CuTeDSL/cute/blackwell/kernel/mixed_input_gemm/`` at the pinned commit) multiply a
narrow A (int8 or int4, M x K, K-major) by a 16-bit B (N x K, K-major) on SM100: four transform
warps convert A to B's type (int4 also times a bf16 scale per row and per ``scale_k`` elements of
K) and store it into TMEM (``tcgen05.st``), where ``tcgen05.mma`` reads A while B comes from SMEM
(an M-major A would go back to SMEM instead). The
workload here: A drawn from a normal distribution and quantized (int4: symmetric per block of
``scale_k``, bf16 scales; int8: round(16 x), no scale), B standard normal, the reference the
dequantized A times B in fp32. The plan's dtype is B's and C's.

The examples' ``run()`` mark operands with alignments that depend on the extents
(``get_divisibility``: the largest power of two dividing K, or N for C, at most 128), and int4 A
with K a multiple of 8 is pre-shuffled on the host when the toolkit has the shuffle conversion
(CUDA 13.1+; this DSL ships 13.4): within every 8 elements, 1 and 2 and 5 and 6 swap
(``mixed_input_host_utils.py``). So K and N are static shape params. Compile-only: no SM100 GPU here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.operands import (
    batched,
    fake_batched,
    nibble_storage,
    pack_nibbles,
)
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size

EXAMPLES_DIR = "examples/python/CuTeDSL/cute/blackwell/kernel/mixed_input_gemm"
INT8_SCALE = 16.0  # int8 A = round(16 x) of a standard normal x, clamped (convert-only: no scale)
SHUFFLE_PERMUTATION = (0, 2, 1, 3, 4, 6, 5, 7)  # within 8 int4 elements (mixed_input_host_utils.py)


@dataclass(frozen=True)
class NarrowA:
    """A's type and how it widens: convert-only (int8) or convert-scale (int4, one scale per ``scale_k``)."""

    name: str  # "int4" or "int8"
    scale_k: int  # 0: no scale tensor

    def cute_type(self) -> Any:
        import cutlass

        return {"int4": cutlass.Int4, "int8": cutlass.Int8}[self.name]

    @property
    def bits(self) -> int:
        return 4 if self.name == "int4" else 8

    @property
    def scale_m(self) -> int:
        return 1 if self.scale_k else 0  # the examples support one scale per row or none


# --8<-- [start:configs]
# The docstrings' two commands: int4 A with a bf16 scale per row and 256 elements of K (convert-scale,
# 2-CTA 256x128x128 MMA on a 2x1 cluster), then int8 A converted without a scale (128x128x64, no cluster).
CONFIGS: tuple[Config, ...] = (
    {
        "a": "int4",
        "scale_k": 256,
        "mma_tiler_mnk": (256, 128, 128),
        "cluster_shape_mn": (2, 1),
        "use_2cta_instrs": True,
    },
    {
        "a": "int8",
        "scale_k": 0,
        "mma_tiler_mnk": (128, 128, 64),
        "cluster_shape_mn": (1, 1),
        "use_2cta_instrs": False,
    },
)
# --8<-- [end:configs]


def divisibility(extent: int, upper: int = 128) -> int:
    """The largest power of two dividing ``extent``, at most ``upper`` (the examples' ``get_divisibility``)."""
    return min(extent & -extent, upper)


def shuffles(a: NarrowA, k: int, b_dtype: str) -> bool:
    """Whether the examples pre-shuffle A (``mixed_input_helpers.is_shuffle_a`` with a 13.1+ toolkit)."""
    return a.name == "int4" and k % 8 == 0 and b_dtype == "bfloat16" and a.scale_k >= 8


class MixedInputGemmPlan(KernelPlan):
    """Narrow A times 16-bit B; a variant adds its grouping and builds the example's kernel."""

    layer = "gemm"
    archs = ("sm_100a",)
    dtypes = ("bfloat16", "float16")
    backend = "cute"
    static_shape_params: ClassVar[tuple[str, ...] | None] = ("n", "k")  # alignments follow N and K
    data_distribution = (
        "B standard normal; A standard normal quantized: int4 symmetric per (row, scale_k block) with bf16 "
        f"scales, int8 = round({INT8_SCALE:g} x) clamped to [-127, 127] without a scale"
    )
    example_file: ClassVar[str]

    @classmethod
    def upstream_example(cls) -> str:
        return f"{EXAMPLES_DIR}/{cls.example_file}"

    def _autotune_configs(self) -> list[Config]:
        return [dict(config) for config in CONFIGS]

    def tolerance(self) -> float:
        return 5e-3 if self.dtype == "bfloat16" else 1e-3  # exact products, fp32 sums; C's rounding dominates

    def narrow(self, config: Config | None = None) -> NarrowA:
        config = config or self.default_config()
        return NarrowA(config["a"], config["scale_k"])

    def validate_shape(self, shape: Shape) -> None:
        a = self.narrow()
        multiple = max(a.scale_k, 32)  # whole scale blocks; 16-byte rows of int4 A
        if shape["k"] % multiple:
            raise UnsupportedShapeError(
                f"{self.name} needs --k (={shape['k']}) to be a multiple of {multiple} for {a.name} A; pad K with zeros"
            )
        if shape["n"] % 8:
            raise UnsupportedShapeError(
                f"{self.name} needs --n (={shape['n']}) to be a multiple of 8 (16-byte rows)"
            )

    # --- A: quantize, dequantize, lay out as the example wants ------------------------------------
    def quantize_a(self, rows: int, k: int, groups: int) -> Tensors:
        """``a`` (rows, K, groups) as int8 values (int4 in [-8, 7]) and, for int4, ``a_scale`` (rows, K / scale_k, groups)."""
        import torch

        from mla_var3.kernel.tensors import torch_dtype

        a = self.narrow()
        x = torch.randn((groups, rows, k), device="cuda")
        if not a.scale_k:
            return {"a": (x * INT8_SCALE).round().clamp(-127, 127).to(torch.int8).permute(1, 2, 0)}
        blocks = x.reshape(groups, rows, k // a.scale_k, a.scale_k)
        scale = (blocks.abs().amax(dim=-1, keepdim=True) / 7).clamp(min=1e-8).to(torch_dtype(self.dtype))
        q = (blocks / scale.float()).round().clamp(-8, 7).to(torch.int8).reshape(groups, rows, k)
        # The scale tensor is M-major (mixed_input_host_utils.py): stride 1 along the rows.
        scales = scale.reshape(groups, rows, k // a.scale_k).permute(0, 2, 1).contiguous().permute(2, 1, 0)
        return {"a": q.permute(1, 2, 0), "a_scale": scales}

    def dequantized_a(self, inputs: Tensors, group: int) -> Any:
        a = inputs["a"][:, :, group].float()
        if "a_scale" not in inputs:
            return a
        return a * inputs["a_scale"][:, :, group].float().repeat_interleave(self.narrow().scale_k, dim=1)

    def a_operands(self, inputs: Tensors, k: int) -> tuple[Any, Any]:
        """(a, a_scale or None) for a launch: int4 shuffled when the example shuffles, packed, retyped."""
        import torch
        from cutlass.cute.runtime import from_dlpack

        a = self.narrow()
        align = divisibility(k)
        values = inputs["a"]  # (rows, K, groups)
        if shuffles(a, k, self.dtype):
            rows, _, groups = values.shape
            values = values.reshape(rows, k // 8, 8, groups)[:, :, list(SHUFFLE_PERMUTATION), :].reshape(
                rows, k, groups
            )
        planes = [values[:, :, g] for g in range(values.shape[2])]
        if a.bits == 4:
            planes = [nibble_storage(pack_nibbles(p.view(torch.uint8))) for p in planes]
        tensor = from_dlpack(torch.stack(planes, dim=0).permute(1, 2, 0), assumed_align=align)
        tensor.element_type = a.cute_type()
        tensor = tensor.mark_layout_dynamic(leading_dim=1)
        if not a.scale_k:
            return tensor, None
        scale = from_dlpack(inputs["a_scale"], assumed_align=align).mark_layout_dynamic(leading_dim=0)
        return tensor, scale

    def fake_a_operands(self, k: int) -> tuple[Any, Any]:
        """:meth:`a_operands`' types, tensor-free."""
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_fake_tensor

        a = self.narrow()
        align = divisibility(k)
        tensor = fake_batched(a.cute_type(), align=align)
        if not a.scale_k:
            return tensor, None
        shape = tuple(cute.sym_int() for _ in range(3))
        scale = make_fake_tensor(
            cute_dtype(self.dtype), shape, (1, cute.sym_int64(), cute.sym_int64()), assumed_align=align
        )
        return tensor, scale

    def b_operand(self, t: Any, k: int) -> Any:
        return batched(t, align=divisibility(k))

    def c_operand(self, t: Any, n: int) -> Any:
        return batched(t, align=divisibility(n), divisibility=divisibility(n))

    def fake_b_c(self, n: int, k: int) -> tuple[Any, Any]:
        dtype = cute_dtype(self.dtype)
        return fake_batched(dtype, align=divisibility(k)), fake_batched(
            dtype, align=divisibility(n), divisibility=divisibility(n)
        )

    def max_active_clusters(self, config: Config) -> int:
        """A B200's SMs over the cluster size (``run()`` asks ``HardwareInfo``, which needs a GPU)."""
        m, n = config["cluster_shape_mn"]
        return B200_SM_COUNT // (m * n)

    def a_bytes(self, m: int, k: int, groups: int) -> int:
        a = self.narrow()
        scale_bytes = m * (k // a.scale_k) * element_size(self.dtype) if a.scale_k else 0
        return groups * (m * k * a.bits // 8 + scale_bytes)


__all__ = ["CONFIGS", "EXAMPLES_DIR", "MixedInputGemmPlan", "NarrowA", "divisibility", "shuffles"]
