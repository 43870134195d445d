"""Debugging on a CPU: what Python's ``print`` and ``cute.printf`` show, and three error messages read.

``printing`` runs a ``@cute.jit`` host function (no kernel: it runs on the CPU), so both its trace-time
``print`` and its run-time ``cute.printf`` output appear. The ``@expect`` functions are real mistakes
compiled for a real target; each keeps the error the debugging page explains, or the build fails.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.base_dsl.common import DSLRuntimeError, DSLUserCodeError
from cutlass.cute.nvgpu import OperandMajorMode
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for


# --8<-- [start:printing]
@cute.jit
def report(x: cutlass.Int32, tile: cutlass.Constexpr):
    print("print:  x =", x, "| tile =", tile)  # trace time: once, while compiling
    cute.printf("printf: x = {} | tile = {}", x, tile)  # run time: every call, with the real value
    layout = cute.make_layout((tile, 4))
    print("print:  layout =", layout)  # a static layout prints in full at trace time
# --8<-- [end:printing]


@expect(prints="printf: x = 7")
def printing() -> None:
    compiled = cute.compile(report, cutlass.Int32(0), 8)  # traces: the prints run here
    compiled(cutlass.Int32(7))  # runs the host code: printf shows the run-time value
    compiled(cutlass.Int32(9))


# --8<-- [start:mistakes]
@cute.kernel
def copy_128_bits(t: cute.Tensor):
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), t.element_type, num_bits_per_copy=128)
    frag = cute.make_rmem_tensor((8,), t.element_type)
    cute.copy(atom, t, frag)  # 8 bf16 = 128 bits in one access: needs a 16-byte-aligned source


@cute.jit
def launch_copy(t: cute.Tensor):
    copy_128_bits(t).launch(grid=[1, 1, 1], block=[1, 1, 1])


@cute.kernel
def warpgroup_mma():
    tiled_mma = sm90_utils.make_trivial_tiled_mma(
        cutlass.BFloat16, cutlass.BFloat16, OperandMajorMode.K, OperandMajorMode.K,
        cutlass.Float32, (1, 1, 1), tiler_mn=(64, 16),
    )
    cute.make_rmem_tensor(tiled_mma.partition_shape_C((64, 16)), cutlass.Float32).fill(0.0)


@cute.jit
def launch_mma():
    warpgroup_mma().launch(grid=[1, 1, 1], block=[128, 1, 1])
# --8<-- [end:mistakes]


@expect(raises=DSLRuntimeError, message="does not meet requirement (128 bits)")
def misaligned_vector_copy() -> None:
    only_2_byte_aligned = make_fake_compact_tensor(cutlass.BFloat16, (8,), assumed_align=2)
    compile_for(launch_copy, only_2_byte_aligned, arch="sm_90a")


@expect(raises=DSLUserCodeError, message="expects arch to be sm_90a, but got sm_80")
def wgmma_for_ampere() -> None:
    compile_for(launch_mma, arch="sm_80")


SOURCE_IN_A_STRING = "import cutlass.cute as cute\n\n@cute.jit\ndef typed_in_a_string():\n    pass\n"


@expect(raises=DSLUserCodeError, message="error[UNSUP_NO_SOURCE]")
def no_source_file() -> None:
    namespace: dict[str, object] = {}
    exec(SOURCE_IN_A_STRING, namespace)  # what a REPL, `python -c` or a notebook-style exec does
    cute.compile(namespace["typed_in_a_string"])
