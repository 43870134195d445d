"""Step 5, ``sm100_gemm_tmem_double_buffer``: two TMEM accumulator stages; epilogue and MMAs overlap.

Over ``persistent_clc``: the accumulator gets a second stage. With one, the MMA warp's
``acc_producer.acquire`` for tile *i + 1* waits until the epilogue has drained tile *i* out of
TMEM, so the tensor core idles for every epilogue. With two, the MMAs of tile *i + 1* fill one
stage while the epilogue drains tile *i* from the other; the MMA warp only waits when an
epilogue takes longer than a whole mainloop.

Nothing else changes, because the earlier steps were written for any stage count: the
accumulator fragment has a stage mode (``WarpSpecializedGemm.setup``: ``make_fragment_C`` of the
shape with ``acc_stages`` appended, stage ``s`` at column offset ``s x N``), the accumulator
pipeline has ``acc_stages`` stages, and both sides take the stage index from their own pipeline
state (``common.mma_tile`` and ``common.store_tile_tma``), so they agree on which columns a tile
uses without passing it. TMEM: 2 x 256 fp32 columns = all 512 of the SM.

Learned from CUTLASS ``examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_3.py``
(``acc_stages = 2``) and ``examples/python/CuTeDSL/cute/blackwell/kernel/dense_gemm/dense_gemm_persistent.py``
(pinned commit). Compile-verified only: no SM100 GPU here, numerics unverified.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.sm100_gemm.persistent_clc.kernel import Sm100GemmPersistentClc


# --8<-- [start:double_buffer]
class Sm100GemmTmemDoubleBuffer(Sm100GemmPersistentClc):
    """Step 4 with two accumulator stages in TMEM: 2 x N columns, a two-slot MMA -> epilogue pipeline."""

    acc_stages = 2
# --8<-- [end:double_buffer]
