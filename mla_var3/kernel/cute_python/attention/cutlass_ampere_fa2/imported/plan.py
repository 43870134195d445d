"""Plan for ``cutlass_ampere_fa2``: CUTLASS's Ampere ``flash_attention_v2.py`` imported from ``CUTLASS_DIR``.

The kernel is NVIDIA's example, loaded at ``plan()`` time (never copied) and fed the dense
attention workload of :mod:`~mla_var3.kernel.cute_python.attention.fmha_workload`. It is plain
SM80 code (``cp.async``, ``ldmatrix``, ``mma.sync``): compiled for ``sm_80`` it proves the
Ampere build, compiled for ``sm_90a`` it runs on the H200 (a CuTe DSL build carries SASS only,
so an ``sm_80`` cubin cannot load on 9.0: see the ``sass-only-arch-mismatch`` page).

What the example expects (``examples/python/CuTeDSL/cute/ampere/kernel/attention/`` at the
pinned commit):

- ``FlashAttentionForwardAmpere(head_dim, m_block_size, n_block_size, num_threads, is_causal)``
  (``flash_attention_v2.py:96-104``); ``can_implement`` (``:133-177``) bounds the tiles by SMEM.
- ``__call__(q, k, v, o, softmax_scale, stream)`` with all four tensors ``(b, s, h, d)``
  row-major, as ours are: no GQA, so ``--hk`` must equal ``--h``. ``run()`` marks each
  dynamic with ``d`` a multiple of 8 and 16-byte alignment (``:1211-1221``); the fake tensors
  here carry the same marks.
- Causal is a constructor flag, aligned top-left like our reference (``:989-998``); no LSE.

Configs: the argparse default (128x64 tiles, 128 threads, ``:1310-1312``), then the
docstring's command (128x128, ``:68-71``).
"""

from __future__ import annotations

import math
from typing import Any

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import example_compile_context
from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.imported.plan import SHAPE_PARAMS
from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
from mla_var3.kernel.cute_python.attention.fmha_workload import FmhaPlanBase
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors

EXAMPLE = "examples/python/CuTeDSL/cute/ampere/kernel/attention/flash_attention_v2.py"
D_DIVISIBILITY = 8  # 16 bytes of a 16-bit type (flash_attention_v2.py:1216-1220)


def fake_bshd(dtype: Any) -> Any:
    """A tensor-free ``(b, s, h, d)`` operand typed like :func:`bshd`'s tensors."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    shape = (cute.sym_int(), cute.sym_int(), cute.sym_int(), cute.sym_int(divisibility=D_DIVISIBILITY))
    stride = (*(cute.sym_int64(divisibility=D_DIVISIBILITY) for _ in range(3)), 1)
    return make_fake_tensor(dtype, shape, stride, assumed_align=16)


def bshd(t: Any) -> Any:
    """A row-major ``(b, s, h, d)`` torch tensor marked as the example's ``run()`` marks it."""
    from cutlass.cute.runtime import from_dlpack

    return (
        from_dlpack(t, assumed_align=16)
        .mark_layout_dynamic(leading_dim=3)
        .mark_compact_shape_dynamic(mode=3, stride_order=t.dim_order(), divisibility=D_DIVISIBILITY)
    )


class CutlassAmpereFa2Plan(FmhaPlanBase):
    name = "cutlass_ampere_fa2"
    description = (
        "CUTLASS's Ampere flash_attention_v2.py imported from CUTLASS_DIR: cp.async, ldmatrix and mma.sync, "
        "one K and one V buffer, online softmax in registers, 4 warps per CTA"
    )
    archs = ("sm_80", "sm_90a")
    dtypes = ("bfloat16", "float16")
    shape_params = SHAPE_PARAMS
    check_shapes = (
        {"b": 2, "s": 1024, "t": 1024, "h": 8, "hk": 8, "d": 128, "causal": 1},
        {"b": 1, "s": 1000, "t": 1000, "h": 4, "hk": 4, "d": 64, "causal": 0},  # partial tiles
    )
    static_shape_params = ("d", "causal")  # the constructor's head_dim and is_causal

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["hk"] != shape["h"]:
            raise UnsupportedShapeError(
                f"{self.name} has no grouped-query attention: pass --hk {shape['h']} (= --h)"
            )
        if shape["d"] % D_DIVISIBILITY:
            raise UnsupportedShapeError(
                f"{self.name} needs --d to be a multiple of {D_DIVISIBILITY}, got {shape['d']}"
            )

    def _autotune_configs(self) -> list[Config]:
        return [
            {"m_block_size": 128, "n_block_size": 64, "num_threads": 128},
            {"m_block_size": 128, "n_block_size": 128, "num_threads": 128},
        ]

    # --8<-- [start:plan]
    def plan(self, config: Config) -> ExampleKernel:
        from mla_var3.kernel.tensors import cute_dtype
        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        fa2_cls, dtype = example.FlashAttentionForwardAmpere, cute_dtype(self.dtype)
        tiles = (config["m_block_size"], config["n_block_size"], config["num_threads"])

        def host_for(shape: Shape) -> Any:
            d, causal = shape["d"], bool(shape["causal"])
            if not fa2_cls.can_implement(dtype, d, *tiles, causal):
                raise UnsupportedShapeError(
                    f"{EXAMPLE} cannot run d={d} with {config}; pick another --config or --d"
                )
            return fa2_cls(d, *tiles, causal)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (*(fake_bshd(dtype) for _ in "qkvo"), 1.0 / math.sqrt(shape["d"]))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            tensors = (inputs["q"], inputs["k"], inputs["v"], outputs["o"])
            return (*(bshd(t) for t in tensors), 1.0 / math.sqrt(inputs["q"].shape[3]))

        return ExampleKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            compile_context=example_compile_context(),
        )

    # --8<-- [end:plan]


__all__ = ["EXAMPLE", "CutlassAmpereFa2Plan", "bshd", "fake_bshd"]
