"""Vectorized elementwise add, C = A + B, for 1-D tensors of any length (sm_80 and newer).

Each CTA owns one tile of ``threads * vec * ilp`` elements. A thread moves ``ilp``
independent 128-bit vectors per tensor (``vec`` elements each), so a warp reads 512
contiguous bytes per vector and each thread has ``ilp`` loads in flight. Full tiles take an
unpredicated vector path; the one partial tile at the end takes a per-element predicated
path built from an identity (coordinate) tensor.

Learned from CUTLASS ``examples/python/CuTeDSL/cute/ampere/kernel/elementwise/elementwise_add.py``
(TV layouts and coordinate-tensor predication, lines 55-110 and 181-221 at the pinned commit);
the 1-D tiling, the split into full and tail tiles and the ILP factor are ours.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute


class VectorizedAdd:
    """C = A + B with 128-bit vector copies; ``threads`` per CTA, ``ilp`` vectors per thread."""

    def __init__(self, threads: int = 256, ilp: int = 4, copy_bits: int = 128) -> None:
        self.threads = threads
        self.ilp = ilp
        self.copy_bits = copy_bits

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream) -> None:
        # --8<-- [start:vectorized_tiled_copy]
        vec = self.copy_bits // mA.element_type.width  # elements per 128-bit access
        tile = self.threads * vec * self.ilp
        # TV layout: (thread, (value, repeat)) -> offset inside the tile. Thread t owns the
        # 16-byte chunk t of every 'threads * vec'-element row, so a warp's accesses coalesce.
        tv_layout = cute.make_layout(
            (self.threads, (vec, self.ilp)), stride=(vec, (1, self.threads * vec))
        )
        gA = cute.zipped_divide(mA, (tile,))  # ((tile,), (num_tiles,))
        gB = cute.zipped_divide(mB, (tile,))
        gC = cute.zipped_divide(mC, (tile,))
        # --8<-- [end:vectorized_tiled_copy]
        cC = cute.zipped_divide(cute.make_identity_tensor(mC.shape), (tile,))
        full_tiles = cute.size(mC) // tile
        self.kernel(gA, gB, gC, cC, tv_layout, full_tiles, cute.size(mC)).launch(
            grid=[cute.size(gC, mode=[1]), 1, 1], block=[self.threads, 1, 1], stream=stream
        )

    @cute.kernel
    def kernel(
        self,
        gA: cute.Tensor,
        gB: cute.Tensor,
        gC: cute.Tensor,
        cC: cute.Tensor,
        tv_layout: cute.Layout,
        full_tiles: cutlass.Int32,
        n: cutlass.Int32,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        # This thread's view of its CTA's tile: ((vec, ilp)) elements.
        thrA = cute.composition(gA[(None, bidx)], tv_layout)[(tidx, None)]
        thrB = cute.composition(gB[(None, bidx)], tv_layout)[(tidx, None)]
        thrC = cute.composition(gC[(None, bidx)], tv_layout)[(tidx, None)]
        if bidx < full_tiles:
            # --8<-- [start:vector_path]
            atom = cute.make_copy_atom(
                cute.nvgpu.CopyUniversalOp(), gA.element_type, num_bits_per_copy=self.copy_bits
            )
            frgA = cute.make_fragment_like(thrA)
            frgB = cute.make_fragment_like(thrB)
            cute.copy(atom, thrA, frgA)  # ilp x LDG.128, all in flight before the first use
            cute.copy(atom, thrB, frgB)
            frgC = cute.make_fragment_like(thrC)
            frgC.store((frgA.load().to(cutlass.Float32) + frgB.load().to(cutlass.Float32)).to(gC.element_type))
            cute.copy(atom, frgC, thrC)
            # --8<-- [end:vector_path]
        else:
            # --8<-- [start:predicated_tail]
            # The last, partial tile: the identity tensor gives each element's global index,
            # and only indices below n are read or written.
            thrCrd = cute.composition(cC[(None, bidx)], tv_layout)[(tidx, None)]
            for i in cutlass.range_constexpr(cute.size(thrCrd)):
                if cute.elem_less(thrCrd[i], (n,)):
                    thrC[i] = (thrA[i].to(cutlass.Float32) + thrB[i].to(cutlass.Float32)).to(gC.element_type)
            # --8<-- [end:predicated_tail]
