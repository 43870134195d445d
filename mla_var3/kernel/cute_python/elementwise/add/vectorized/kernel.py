"""Vectorized elementwise add, C = A + B, for 1-D tensors of any length (sm_80 and newer).

Written in the idiom of CUTLASS's elementwise example: a thread layout and a value layout make
a tiled copy (``make_tiled_copy_tv``); each thread takes its slice (``get_slice(tidx)``) and
partitions its CTA's tile of A, B and C with it (``partition_S``/``partition_D``); a predicate
tensor computed from an identity (coordinate) tensor guards the elements past the end.

Each CTA owns one tile of ``threads * vec * ilp`` elements: thread t holds the 16-byte vector
t of each ``threads * vec``-element slice, ``ilp`` slices per tile, so a warp's accesses are
contiguous and each thread has ``ilp`` independent loads in flight per tensor. Full tiles copy
with 128-bit vector atoms and no predicates; the one partial tile at the end copies element
by element under the predicate. The length is dynamic: one binary serves every ``n``.

Learned from CUTLASS ``examples/python/CuTeDSL/cute/ampere/kernel/elementwise/elementwise_add.py``
(tiled copy, partitions and coordinate-tensor predication) at the pinned commit. Its TV
layout is 2-D (rows x columns of a matrix); ours is 1-D, with the tile repeated ``ilp``
times and the split into an unpredicated vector path and a predicated tail: the same idea,
not the same layout algebra.
"""

from __future__ import annotations

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

# The widest global load/store one thread issues (LDG.E.128 / STG.E.128).
MAX_COPY_BITS = 128


class VectorizedAdd:
    """C = A + B with 128-bit vector copies; ``threads`` per CTA, ``ilp`` vectors per thread and tensor."""

    def __init__(self, threads: int = 256, ilp: int = 4) -> None:
        self.threads = threads
        self.ilp = ilp

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream) -> None:
        # --8<-- [start:vectorized_tiled_copy]
        vec = MAX_COPY_BITS // mA.element_type.width  # elements per 128-bit access
        # Thread t owns the vector t of every `threads * vec`-element slice of the tile.
        thr_layout = cute.make_layout(self.threads)
        val_layout = cute.make_layout(vec)
        tile = self.threads * vec * self.ilp
        gA = cute.zipped_divide(mA, (tile,))  # ((tile,), (num_tiles,))
        gB = cute.zipped_divide(mB, (tile,))
        gC = cute.zipped_divide(mC, (tile,))
        # --8<-- [end:vectorized_tiled_copy]
        cC = cute.zipped_divide(cute.make_identity_tensor(mC.shape), (tile,))
        full_tiles = cute.size(mC) // tile
        self.kernel(gA, gB, gC, cC, mC.shape, full_tiles, thr_layout, val_layout).launch(
            grid=[cute.size(gC, mode=[1]), 1, 1], block=[self.threads, 1, 1], stream=stream
        )

    @cute.kernel
    def kernel(
        self,
        gA: cute.Tensor,
        gB: cute.Tensor,
        gC: cute.Tensor,
        cC: cute.Tensor,
        shape: cute.Shape,
        full_tiles: cutlass.Int32,
        thr_layout: cute.Layout,
        val_layout: cute.Layout,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        tile = (gA[(None, bidx)], gB[(None, bidx)], gC[(None, bidx)])  # this CTA's tile of A, B, C
        if bidx < full_tiles:
            # --8<-- [start:vector_path]
            # A full tile: 128-bit vectors, no predicate.
            atom = cute.make_copy_atom(
                cute.nvgpu.CopyUniversalOp(), gA.element_type, num_bits_per_copy=MAX_COPY_BITS
            )
            thr_copy = cute.make_tiled_copy_tv(atom, thr_layout, val_layout).get_slice(tidx)
            self._add(atom, thr_copy, tile, None)
            # --8<-- [end:vector_path]
        else:
            # --8<-- [start:predicated_tail]
            # The last, partial tile: the same partition, one element per copy. The identity
            # tensor holds each element's coordinate; the predicate keeps those below n.
            atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), gA.element_type)
            thr_copy = cute.make_tiled_copy_tv(atom, thr_layout, val_layout).get_slice(tidx)
            thrCrd = thr_copy.partition_S(cC[(None, bidx)])
            pred = cute.make_rmem_tensor(thrCrd.shape, cutlass.Boolean)
            for i in cutlass.range_constexpr(cute.size(pred)):
                pred[i] = cute.elem_less(thrCrd[i], shape)
            self._add(atom, thr_copy, tile, pred)
            # --8<-- [end:predicated_tail]

    # --8<-- [start:add_tile]
    @cute.jit
    def _add(
        self,
        atom: cute.CopyAtom,
        thr_copy: cute.ThrCopy,
        tile: tuple[cute.Tensor, cute.Tensor, cute.Tensor],
        pred: cute.Tensor | None,
    ) -> None:
        """C = A + B on this thread's part of a tile, every copy under ``pred`` (``None``: all)."""
        blkA, blkB, blkC = tile
        thrA = thr_copy.partition_S(blkA)  # ((values per copy), copies): ((8), 4) for bf16 vectors
        thrB = thr_copy.partition_S(blkB)
        thrC = thr_copy.partition_D(blkC)
        frgA = cute.make_fragment_like(thrA)
        frgB = cute.make_fragment_like(thrB)
        cute.copy(atom, thrA, frgA, pred=pred)  # every load in flight before the first use
        cute.copy(atom, thrB, frgB, pred=pred)
        frgC = cute.make_fragment_like(thrC)
        frgC.store((frgA.load().to(cutlass.Float32) + frgB.load().to(cutlass.Float32)).to(frgC.element_type))
        cute.copy(atom, frgC, thrC, pred=pred)

    # --8<-- [end:add_tile]


__all__ = ["MAX_COPY_BITS", "VectorizedAdd"]
