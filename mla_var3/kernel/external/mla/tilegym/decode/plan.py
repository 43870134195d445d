"""Plan for ``tilegym_mla_decode``: NVIDIA TileGym's cuTile MLA decode as a peer, compiled ahead of time.

The kernel is TileGym's ``_naive_absorb_mla_transpose_kernel`` (``mla_decoding.py`` at
75a1430), imported unchanged from the pinned source (:mod:`~mla_var3.kernel.external.tilegym.source`)
and exported to sm_90 cubins on a CPU machine (:mod:`mla_var3.kernel.cutile.aot`); the GPU runs
the cubins with only the ``cuda-tile`` wheel. One CTA per (``tile_h`` heads, sequence) walks
the whole KV length in ``tile_n``-row steps with an online softmax -- no split-KV, so a batch
smaller than the SM count leaves SMs idle. The KV length is a compile-time constant
(``S_KV``): one cubin per length.

TileGym's interface differs from the shared workload's, and this plan adapts outside the timed
launch: its cache is not paged -- ``kv`` (b, s_k, 512) and ``kpe`` (b, s_k, 64), contiguous,
gathered from the workload's paged cache in ``prepare_inputs`` -- and the query comes split
into ``q`` (b, h, 512) and ``qpe`` (b, h, 64). It writes O (b, h, 512) straight into the
workload's output and its LSE in log2 units into the workload's LSE buffer; the launch then
scales that by ln 2 in place (one small elementwise kernel, part of the timed launch).
Supported: s_q = 1, fixed lengths (``--varlen 0``), bf16.

Configs: ``tile_h`` x ``tile_n`` = 32 x 64, retuned on the H200 (the faster), then 16 x 128 as
TileGym ships it (``mla_decoding``: ``TILE_H = 16``, ``TILE_N = 128``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cutile import aot
from mla_var3.kernel.cutile.aot import AotCuTileKernel, AotProgram, ArraySpec
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.external.tilegym import source
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.workloads.mla import D_LATENT, D_ROPE, SOFTMAX_SCALE, MlaDecodePlanBase, mla_shape

TILEGYM_CHECK_SHAPES: tuple[Shape, ...] = (
    mla_shape(b=2, t=1, h=32),
    mla_shape(b=2, t=63, h=128, page=16),
    mla_shape(b=3, t=65, h=64, page=128),
    mla_shape(b=2, t=4097, h=128),
)


def kernel_args(shape: Shape, config: Config) -> tuple[Any, ...]:
    """TileGym's launch arguments as :class:`ArraySpec` (the order ``mla_decoding`` passes them)."""
    b, h, s = shape["b"], shape["h"], shape["t"]
    kv = ArraySpec("bfloat16", (b, s, D_LATENT))
    return (
        ArraySpec("bfloat16", (b, h, D_LATENT)),  # Q
        ArraySpec("bfloat16", (b, h, D_ROPE)),  # QPE
        kv,  # K
        kv,  # V: the same tensor
        ArraySpec("bfloat16", (b, s, D_ROPE)),  # KPE
        ArraySpec("bfloat16", (b, h, D_LATENT)),  # Out
        ArraySpec("float32", (b, h)),  # L
        SOFTMAX_SCALE,
        D_LATENT,  # TILE_D
        config["tile_h"],
        config["tile_n"],
        D_ROPE,  # TILE_KPE
        s,  # S_KV
        s % config["tile_n"] == 0,  # EVEN_N
    )


def bind_decode(config: Config, program: AotProgram, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
    import cuda.tile as ct
    import torch

    b, h = inputs["q_nope"].shape[:2]
    s = inputs["kv"].shape[1]
    lse = outputs["lse"].view(b, h)  # (b, h, 1): s_q = 1
    args = (inputs["q_nope"], inputs["q_pe"], inputs["kv"], inputs["kv"], inputs["kpe"], outputs["o"].view(b, h, D_LATENT),
            lse, SOFTMAX_SCALE, D_LATENT, config["tile_h"], config["tile_n"], D_ROPE, s, s % config["tile_n"] == 0)
    grid = (math.ceil(h / config["tile_h"]), b, 1)
    kernel = program.kernels["decode"]
    stream = torch.cuda.current_stream()

    def launch() -> None:
        ct.launch(stream, grid, kernel, args)
        lse.mul_(math.log(2.0))  # TileGym's LSE is in log2 units

    return launch


class TileGymMlaDecodePlan(MlaDecodePlanBase):
    name = "tilegym_mla_decode"
    description = "NVIDIA TileGym's cuTile MLA decode (75a1430, non-paged), cubins exported ahead of time"
    archs = ("sm_90a",)
    dtypes = ("bfloat16",)
    backend = "cutile"
    check_shapes = TILEGYM_CHECK_SHAPES

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this peer cannot run here (one line), or ``None``."""
        return aot.unavailable_reason() or source.unavailable_reason()

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["s"] != 1 or shape["varlen"]:
            raise UnsupportedShapeError(
                f"{self.name}: TileGym's mla_decoding takes one query token and one KV length for the whole "
                f"batch; use --s 1 --varlen 0 (got --s {shape['s']} --varlen {shape['varlen']})")

    def prepare_inputs(self, shape: Shape, device: str = "cuda") -> Tensors:
        """The workload's inputs plus TileGym's non-paged views of the same data (copies)."""
        inputs = super().prepare_inputs(shape, device)
        b, t = shape["b"], shape["t"]
        rows = inputs["kv_cache"][inputs["block_table"].long()].reshape(b, -1, inputs["kv_cache"].shape[-1])[:, :t]
        q = inputs["q"][:, 0]
        return inputs | {
            "q_nope": q[..., :D_LATENT].contiguous(),
            "q_pe": q[..., D_LATENT:].contiguous(),
            "kv": rows[..., :D_LATENT].contiguous(),
            "kpe": rows[..., D_LATENT:].contiguous(),
        }

    def _autotune_configs(self) -> list[Config]:
        return [{"tile_h": 32, "tile_n": 64}, {"tile_h": 16, "tile_n": 128}]

    def plan(self, config: Config) -> AotCuTileKernel:
        def prepare(shape: Shape, arch: Arch) -> AotProgram:
            kernel = getattr(source.load_mla_decoding(), source.KERNEL)
            return aot.prepare_program({"decode": (kernel, kernel_args(shape, config))}, shape, arch.name)

        def bind(program: AotProgram, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
            return bind_decode(config, program, inputs, outputs)

        return AotCuTileKernel(prepare=prepare, bind_fn=bind)


__all__ = ["TILEGYM_CHECK_SHAPES", "TileGymMlaDecodePlan", "bind_decode", "kernel_args"]
