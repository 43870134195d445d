"""Plan for ``mla_decode_v1``: v0 + split-KV and an LSE-weighted combine (see ``kernel.py``).

The split count is picked from the shape: enough splits that ``b * ceil(h_q s_q / 64) *
splits`` covers the GPU's SMs about once (132 on an H100/H200), at most the mean sequence's
KV blocks. The workspace is two extra outputs sized by it; the kernel reads the count from
them, so only "split or not" is compile-time.
"""

from typing import Any

from mla_var3.kernel.cute_python.mla.decode.plan_common import (
    TILE_M,
    TILE_N,
    MlaDecodeCutePlanBase,
    default_splits,
    fake_tensor,
    real_tensor,
    sm_count,
)
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.workloads.mla import D_LATENT


class MlaDecodeV1Plan(MlaDecodeCutePlanBase):
    name = "mla_decode_v1"
    description = "MLA decode v1: v0 + split-KV (grid fills the GPU) and an LSE-weighted combine kernel"

    def splits(self, shape: Shape) -> int:
        query_tiles = -(-shape["h"] * shape["s"] // TILE_M)
        kv_blocks = -(-shape["t"] // TILE_N)
        return default_splits(shape["b"], query_tiles, kv_blocks, sm_count())

    def static_shape(self, shape: Shape) -> Shape:
        """The page size and whether the KV is split (from b, s, h and t): what the binary is built for."""
        return {"page": shape["page"], "split": int(self.splits(shape) > 1)}

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v1.kernel import MlaDecodeV1

        return MlaDecodeV1(page=params["page"], split_kv=bool(params["split"]))

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        outputs = super().allocate_outputs(inputs, shape)
        b, s_q, h_q, _ = inputs["q"].shape
        splits = self.splits(shape)
        rows = s_q * h_q if splits > 1 else 1  # one split writes o/lse directly: a token workspace
        device = inputs["q"].device
        outputs["o_part"] = torch.empty((b, splits, rows, D_LATENT), dtype=torch.float32, device=device)
        outputs["lse_part"] = torch.empty((b, splits, rows), dtype=torch.float32, device=device)
        return outputs

    def workspace_args(self, outputs: Tensors | None, shape: Shape) -> tuple[Any, ...]:
        import cutlass

        if outputs is None:
            return (
                fake_tensor(cutlass.Float32, (None, None, None, D_LATENT)),
                fake_tensor(cutlass.Float32, (None, None, None), align=4),
            )
        return (real_tensor(outputs["o_part"], (0, 1, 2)), real_tensor(outputs["lse_part"], (0, 1, 2), align=4))


__all__ = ["MlaDecodeV1Plan"]
