"""Two dependent kernels on one stream, with or without programmatic dependent launch (PDL, sm_90+).

The pair, per row i of an M x N bf16 matrix (N fixed at compile time, M any):

1. **row scale** (the producer): ``y[i, :] = x[i, :] * s[i]`` (bf16 out, the product in fp32);
2. **row dot** (the consumer): ``r[i] = sum_j y[i, j] * z[i, j]`` (fp32), reading what 1 wrote.

Both give each warp one row: 32 lanes x 8 bf16 (one 128-bit vector) cover 256 columns, the
row's ``N / 256`` vectors sit in one thread's registers. A CTA is four warps, four rows.

PDL lets the dependent grid start before the first one has finished. Three pieces:

- the producer executes ``griddepcontrol.launch_dependents`` (SASS ``PREEXIT``) first thing:
  when every CTA of its grid has (or has exited), the dependent grid may launch;
- the consumer does its independent work first -- index math, predicates and **loading its
  z row**, half of its input bytes -- then ``griddepcontrol.wait`` (SASS ``ACQBULK``), which
  returns once the producer grid has completed and its writes are visible; only then it loads y;
- the host launches the consumer with the PDL launch attribute (``use_pdl=True`` on
  ``launch``: CUDA's programmatic stream serialization). The producer is launched without it:
  it has no wait, so it must not start before its predecessor on the stream (which may write x
  or s, or still read y) has finished.

``use_pdl=False`` builds the plain pair, the baseline: neither instruction, no attribute; the
consumer starts once the producer has drained. (The instructions alone change nothing: without
the attribute a wait returns at once; CUTLASS's tutorial, compiled with and without PDL, gives
byte-identical cubins.) One ``@cute.jit`` host launches both kernels, so one call of the
compiled function runs the pair, with no Python between the launches.

Learned from CUTLASS ``examples/python/CuTeDSL/dsl_tutorials/programmatic_dependent_launch.py``
at the pinned commit (the two instructions and ``launch(..., use_pdl=...)``); the kernels, the
row-per-warp tiling and the choice of what the consumer does before its wait are ours.
"""

from __future__ import annotations

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

ROWS_PER_CTA = 4  # one row per warp
VECTOR_BITS = 128  # one LDG.E.128 / STG.E.128 per 8 bf16
LANES = 32
THREADS = ROWS_PER_CTA * LANES


class RowScaleThenDot:
    """``y = x * s[:, None]`` then ``r = (y * z).sum(1)`` as two kernels.

    ``use_pdl``: launch the second one early (programmatic dependent launch). ``overlap_prologue``
    (with PDL): the consumer loads its z row before ``griddepcontrol.wait``; without it the wait
    comes first, so PDL hides only the launch of the second grid, not any of its work.
    """

    def __init__(self, use_pdl: bool, overlap_prologue: bool = True) -> None:
        self.use_pdl = use_pdl
        self.overlap_prologue = overlap_prologue

    # --8<-- [start:host]
    @cute.jit
    def __call__(
        self,
        x: cute.Tensor,
        s: cute.Tensor,
        z: cute.Tensor,
        y: cute.Tensor,
        r: cute.Tensor,
        stream: cuda.CUstream,
    ) -> None:
        """Launch the row scale, then the row dot; N (``x.shape[1]``) is static, M dynamic."""
        rows = cute.ceil_div(x.shape[0], ROWS_PER_CTA)
        # The producer has no wait: no attribute, it starts after whatever came before it.
        # The consumer may start early, once every producer CTA has triggered.
        self.scale_kernel(x, s, y).launch(grid=(rows, 1, 1), block=(THREADS, 1, 1), stream=stream)
        self.dot_kernel(y, z, r).launch(
            grid=(rows, 1, 1), block=(THREADS, 1, 1), stream=stream, use_pdl=self.use_pdl
        )

    # --8<-- [end:host]

    @staticmethod
    def _row_copy(dtype: type[cutlass.Numeric]) -> tuple[cute.CopyAtom, cute.TiledCopy]:
        """A 128-bit copy atom and the tiled copy that gives warp w the row w of a
        (ROWS_PER_CTA, 256) tile, lane l its l-th 8-element vector."""
        vec = VECTOR_BITS // dtype.width
        atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=VECTOR_BITS)
        thr_layout = cute.make_ordered_layout((ROWS_PER_CTA, LANES), order=(1, 0))
        val_layout = cute.make_ordered_layout((1, vec), order=(1, 0))
        return atom, cute.make_tiled_copy_tv(atom, thr_layout, val_layout)

    @staticmethod
    def _my_row() -> tuple[cutlass.Int32, cutlass.Int32]:
        """(row, lane): warp w of CTA b owns row ``4 b + w``."""
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        return bidx * ROWS_PER_CTA + tidx // LANES, tidx % LANES

    @staticmethod
    def _partition(t: cute.Tensor, tiled_copy: cute.TiledCopy) -> cute.Tensor:
        """This thread's vectors of its row of ``t``: the CTA's (4, N) tile, sliced for the thread."""
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        tile = cute.local_tile(t, (ROWS_PER_CTA, t.shape[1]), (bidx, 0))
        return tiled_copy.get_slice(tidx).partition_S(tile)

    # --8<-- [start:producer]
    @cute.kernel
    def scale_kernel(self, mX: cute.Tensor, mS: cute.Tensor, mY: cute.Tensor) -> None:
        if cutlass.const_expr(self.use_pdl):
            # The earliest point: once every CTA of this grid got here (or exited), the dependent
            # grid may launch and fill the SMs this grid's last CTAs leave idle. A hint for the
            # scheduler only: correctness never depends on where this is.
            cute.arch.griddepcontrol_launch_dependents()
        row, _ = self._my_row()
        atom, tiled_copy = self._row_copy(mX.element_type)
        tXgX, tYgY = self._partition(mX, tiled_copy), self._partition(mY, tiled_copy)
        if row < mX.shape[0]:  # the last CTA's warps may fall past M
            frag = cute.make_fragment_like(tXgX)
            cute.copy(atom, tXgX, frag)
            frag.store((frag.load().to(cutlass.Float32) * mS[row]).to(mY.element_type))
            cute.copy(atom, frag, tYgY)

    # --8<-- [end:producer]

    # --8<-- [start:consumer]
    @cute.kernel
    def dot_kernel(self, mY: cute.Tensor, mZ: cute.Tensor, mR: cute.Tensor) -> None:
        if cutlass.const_expr(self.use_pdl and not self.overlap_prologue):
            cute.arch.griddepcontrol_wait()  # wait first: only the launch itself overlaps
        # Prologue: everything that does not read y -- indices, partitions, the predicate and
        # the z row (half of this kernel's loads) -- may run while the producer still runs.
        row, lane = self._my_row()
        atom, tiled_copy = self._row_copy(mZ.element_type)
        tZgZ, tYgY = self._partition(mZ, tiled_copy), self._partition(mY, tiled_copy)
        frag_z, frag_y = cute.make_fragment_like(tZgZ), cute.make_fragment_like(tYgY)
        in_bounds = row < mZ.shape[0]
        if in_bounds:
            cute.copy(atom, tZgZ, frag_z)
        if cutlass.const_expr(self.use_pdl and self.overlap_prologue):
            # Returns once the producer grid has completed and its writes are visible: every
            # read of y comes after it. The z row stays in registers across it.
            cute.arch.griddepcontrol_wait()
        if in_bounds:
            cute.copy(atom, tYgY, frag_y)
            products = frag_y.load().to(cutlass.Float32) * frag_z.load().to(cutlass.Float32)
            partial = products.reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), reduction_profile=0)
            total = cute.arch.warp_reduction_sum(partial)  # the 32 lanes of the row
            if lane == 0:
                mR[row] = total

    # --8<-- [end:consumer]


__all__ = ["LANES", "ROWS_PER_CTA", "THREADS", "VECTOR_BITS", "RowScaleThenDot"]
