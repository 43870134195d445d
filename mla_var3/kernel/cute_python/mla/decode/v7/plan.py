"""Plan for ``mla_decode_v7``: v6's plan with v7's kernel; a split count above the combine's SMEM
table (``MAX_SPLITS`` weights per row) is refused before anything is compiled."""

from typing import Any

from mla_var3.kernel.cute_python.mla.decode.v6.plan import MlaDecodeV6Plan
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape


class MlaDecodeV7Plan(MlaDecodeV6Plan):
    name = "mla_decode_v7"
    description = (
        "MLA decode v7: v6 with a combine that computes every split's weight once per row into SMEM, so "
        "the loop over splits only loads partials and multiplies (v5/v6 load an LSE and take an exp2 per split)"
    )

    def validate_shape(self, shape: Shape) -> None:
        from mla_var3.kernel.cute_python.mla.decode.v7.kernel import MAX_SPLITS

        super().validate_shape(shape)
        if self.splits(shape) > MAX_SPLITS:
            raise UnsupportedShapeError(
                f"mla_decode_v7: {self.splits(shape)} KV splits exceed the combine's table of {MAX_SPLITS} "
                "weights per row (a GPU with more than 160 SMs); use mla_decode_v6"
            )

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v7.kernel import MlaDecodeV7

        return MlaDecodeV7(page=params["page"], split_kv=bool(params["split"]))


__all__ = ["MlaDecodeV7Plan"]
