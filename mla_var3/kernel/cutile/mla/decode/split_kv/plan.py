"""Plan for ``mla_decode_cutile``: our cuTile MLA decode (split-KV + combine, paged KV), compiled ahead of time.

The kernels are in :mod:`.kernel`; they are exported to cubins on a CPU machine and launched
from them on the GPU (:mod:`mla_var3.kernel.cutile.aot`). Every shape-dependent choice is made
here, from the shape alone, so the CPU export and the GPU launch agree:

- ``tile_h`` query rows x ``tile_n`` KV rows per step (``tile_n`` capped at the page size: a
  tile never straddles two pages);
- the split length: enough splits that (row blocks x batch x splits) fills the 132 SMs of an
  H200 once, each split a whole number of ``tile_n`` tiles, from the longest sequence;
- the combine kernel's split count, rounded up to a power of two (a tile extent).

Configs (the first is the default): ``tile_h`` x ``tile_n``; ``v``: ``"load"`` reads V^T from
memory as its own tile, ``"k"`` transposes the K tile already loaded; ``peel``: an unmasked main
loop plus a masked tail loop, else one loop with a masking branch. Debug timings on an H200
(b = 128, h_q = 128, s_k = 8192, page 64, one run, not evidence) ranked them 16 x 64 / load /
peel first, then 32 x 64 / load / peel; transposing K and the single loop were slower, and
64-row query tiles spilled heavily.

The split workspace (fp32 O and LSE per split) is allocated once per input set at ``bind``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cutile import aot
from mla_var3.kernel.cutile.aot import AotCuTileKernel, AotProgram, ArraySpec
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.workloads.mla import (
    D_LATENT,
    D_QK,
    SOFTMAX_SCALE,
    MlaDecodePlanBase,
    page_assignment,
    pages_needed,
)

SM_COUNT = 132  # H200; the split heuristic's target (a fixed number: the export must not depend on a GPU)
COMBINE_ROWS = 16


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def layout(shape: Shape, config: Config) -> dict[str, int]:
    """Every size the kernels and their arguments depend on, from the shape and config alone."""
    lengths, tables, pool = page_assignment(shape)
    rows = shape["s"] * shape["h"]
    tile_n = min(config["tile_n"], shape["page"])
    row_blocks = math.ceil(rows / config["tile_h"])
    longest = max(lengths)
    splits_wanted = max(1, math.ceil(SM_COUNT / (row_blocks * shape["b"])))
    split_len = math.ceil(math.ceil(longest / splits_wanted) / tile_n) * tile_n
    return {
        "rows": rows,
        "row_blocks": row_blocks,
        "tile_n": tile_n,
        "split_len": split_len,
        "splits": math.ceil(longest / split_len),
        "pool": pool,
        "max_pages": max(pages_needed(n, shape["page"]) for n in lengths) if tables else 0,
    }


def kernel_requests(shape: Shape, config: Config, dtype: str) -> dict[str, tuple[str, tuple[Any, ...]]]:
    """(kernel name in :mod:`.kernel`, launch arguments as :class:`ArraySpec`) for split and combine."""
    sizes = layout(shape, config)
    b, s_q, h_q, page = shape["b"], shape["s"], shape["h"], shape["page"]
    rows, splits = sizes["rows"], sizes["splits"]
    o_part = ArraySpec("float32", (b, splits, rows, D_LATENT))
    lse_part = ArraySpec("float32", (b, splits, rows))
    seqlens = ArraySpec("int32", (b,))
    split = (
        ArraySpec(dtype, (b, rows, D_QK)),
        ArraySpec(dtype, (sizes["pool"], page, D_QK)),
        ArraySpec("int32", (b, sizes["max_pages"])),
        seqlens,
        o_part,
        lse_part,
        SOFTMAX_SCALE * math.log2(math.e),
        sizes["split_len"],
        s_q,
        h_q,
        page,
        config["tile_h"],
        sizes["tile_n"],
        config["v"] == "load",
        config["peel"],
    )
    combine = (
        o_part,
        lse_part,
        seqlens,
        ArraySpec(dtype, (b, rows, D_LATENT)),
        ArraySpec("float32", (b, h_q, s_q)),
        sizes["split_len"],
        h_q,
        _next_pow2(splits),
        COMBINE_ROWS,
    )
    return {"split": ("mla_decode_split_kernel", split), "combine": ("mla_decode_combine_kernel", combine)}


def bind_decode(config: Config, program: AotProgram, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
    """Workspace and launch arguments built once; the launch runs split then combine."""
    import cuda.tile as ct
    import torch

    shape = program.shape
    sizes = layout(shape, config)
    requests = kernel_requests(shape, config, str(inputs["q"].dtype).removeprefix("torch."))
    q, kv = inputs["q"], inputs["kv_cache"]
    b, rows, splits = shape["b"], sizes["rows"], sizes["splits"]
    o_part = torch.empty((b, splits, rows, D_LATENT), dtype=torch.float32, device=q.device)
    lse_part = torch.empty((b, splits, rows), dtype=torch.float32, device=q.device)
    split_args = (q.view(b, rows, D_QK), kv.view(kv.shape[0], kv.shape[1], D_QK), inputs["block_table"],
                  inputs["seqlens"], o_part, lse_part, *requests["split"][1][6:])
    combine_args = (o_part, lse_part, inputs["seqlens"], outputs["o"].view(b, rows, D_LATENT), outputs["lse"],
                    *requests["combine"][1][5:])
    split_grid = (sizes["row_blocks"], b, splits)
    combine_grid = (math.ceil(rows / COMBINE_ROWS), b, 1)
    split_kernel, combine_kernel = program.kernels["split"], program.kernels["combine"]
    stream = torch.cuda.current_stream()

    def launch() -> None:
        ct.launch(stream, split_grid, split_kernel, split_args)
        ct.launch(stream, combine_grid, combine_kernel, combine_args)

    return launch


class MlaDecodeCuTilePlan(MlaDecodePlanBase):
    name = "mla_decode_cutile"
    description = "Our cuTile MLA decode: split-KV over the paged cache (page from the block table) + combine"
    archs = ("sm_90a",)
    backend = "cutile"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this kernel cannot run here (one line), or ``None``."""
        return aot.unavailable_reason()

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        page = shape["page"]
        if page < 16 or page & (page - 1):
            raise UnsupportedShapeError(f"{self.name} needs --page a power of two >= 16 (a tile never straddles pages), "
                                        f"got {page}")

    def _autotune_configs(self) -> list[Config]:
        return [
            {"tile_h": 16, "tile_n": 64, "v": "load", "peel": True},
            {"tile_h": 32, "tile_n": 64, "v": "load", "peel": True},
            {"tile_h": 32, "tile_n": 64, "v": "k", "peel": True},
            {"tile_h": 32, "tile_n": 64, "v": "load", "peel": False},
        ]

    def plan(self, config: Config) -> AotCuTileKernel:
        def prepare(shape: Shape, arch: Arch) -> AotProgram:
            from mla_var3.kernel.cutile.mla.decode.split_kv import kernel

            requests = kernel_requests(shape, config, self.dtype)
            kernels = {name: (getattr(kernel, fn), args) for name, (fn, args) in requests.items()}
            return aot.prepare_program(kernels, shape, arch.name)

        def bind(program: AotProgram, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
            return bind_decode(config, program, inputs, outputs)

        return AotCuTileKernel(prepare=prepare, bind_fn=bind)


__all__ = ["MlaDecodeCuTilePlan", "bind_decode", "kernel_requests", "layout"]
