"""``Tensor`` vs ``TensorSSA``: references to memory, values in registers, and what each operation compiles to.

The tensor-ssa concept page runs these while it is built. ``show_kinds`` prints, at trace time, what
each object of a small kernel is; ``math_table`` compiles a load-convert-compute-store kernel for
sm_90a and counts its SASS; ``conversion_table`` shows which instruction each way of converting a
float becomes; ``indexing_table`` checks whether indexing a loaded value instead of the register
tensor costs local memory (a regression reported against DSL 4.5.0). The ``@expect`` functions are
the two refusals a value's immutability and shape produce.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.analysis.resources import resource_usage
from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for, opcode_count, sass_counts

VALUES = 8  # values per thread: 8 bf16 = one 128-bit access


# --8<-- [start:kinds]
@cute.kernel
def kinds(src: cute.Tensor, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    g = src[None, tidx]  # a slice of a global tensor: still a reference to memory
    r = cute.make_rmem_tensor(g.layout, cutlass.Float32)  # a register tensor (a "fragment")
    v = g.load()  # a value: the 8 elements, read once
    w = v.to(cutlass.Float32) * 2.0  # arithmetic on values makes new values
    r.store(w)  # a value written into a tensor
    x = r[0]  # one element of a tensor: a scalar
    total = r.load().reduce(cute.ReductionOp.ADD, 0.0, 0)  # a value reduced to a scalar
    dst[None, tidx].store(w.to(dst.element_type))
    dst[0, tidx] = cutlass.Float32(total).to(dst.element_type)  # the reduction is a raw IR value: wrap it
    for name, obj in (("g", g), ("r", r), ("v", v), ("w", w), ("x", x), ("total", total)):
        print(f"{name:5} {type(obj).__name__:12} {obj}")
# --8<-- [end:kinds]


@cute.jit
def launch(src: cute.Tensor, dst: cute.Tensor, kernel: cutlass.Constexpr):
    """Launch ``kernel`` on one warp, one column of ``VALUES`` elements per thread."""
    kernel(src, dst).launch(grid=[1, 1, 1], block=[32, 1, 1])


def _columns(dtype: type) -> cute.Tensor:
    """A fake ``(VALUES, 32)`` tensor whose columns are contiguous and 16-byte aligned."""
    return make_fake_compact_tensor(dtype, (VALUES, 32), assumed_align=16)


@expect(prints="v     TensorSSA")
def show_kinds() -> None:
    compile_for(launch, _columns(cutlass.BFloat16), _columns(cutlass.BFloat16), kinds)


# --8<-- [start:math]
@cute.kernel
def scaled_exp(src: cute.Tensor, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = src[None, tidx].load().to(cutlass.Float32)  # 8 bf16 in, widened to f32
    e = cute.math.exp2(x * 1.4426950408889634, fastmath=True)  # exp(x) as 2^(x log2 e)
    e = cute.where(x > 0.0, e, cute.full_like(e, 0.0))  # elementwise select, no branch
    dst[None, tidx].store(e.to(dst.element_type))  # narrowed to bf16 and stored
# --8<-- [end:math]


def math_table() -> str:
    """The SASS of ``scaled_exp`` for sm_90a: every instruction but ``NOP``, with its count."""
    sass = sass_counts(compile_for(launch, _columns(cutlass.BFloat16), _columns(cutlass.BFloat16), scaled_exp))
    rows = ["| instruction | count |", "|---|---|"]
    rows += [f"| `{m}` | {n} |" for m, n in sorted(sass.items()) if m != "NOP"]
    return "\n".join(rows)


# --8<-- [start:convert]
@cute.kernel
def to_int(src: cute.Tensor, dst: cute.Tensor):
    x = src[0]  # a Float32 scalar
    dst[0] = x.to(cutlass.Int32)  # .to() on a scalar
    dst[1] = cutlass.Int32(x)  # the type's constructor
    dst[2] = cutlass.Int32(cute.math.floor(x))  # round down first
    dst[3] = cutlass.Int32(cute.math.ceil(x))  # round up first
# --8<-- [end:convert]


@cute.jit
def launch_one(src: cute.Tensor, dst: cute.Tensor, kernel: cutlass.Constexpr):
    kernel(src, dst).launch(grid=[1, 1, 1], block=[1, 1, 1])


def conversion_table() -> str:
    """The float-to-int conversion instructions of ``to_int`` (sm_90a), in the order they appear."""
    src = make_fake_compact_tensor(cutlass.Float32, (4,), assumed_align=16)
    dst = make_fake_compact_tensor(cutlass.Int32, (4,), assumed_align=16)
    sass = sass_counts(compile_for(launch_one, src, dst, to_int))
    rows = ["| conversion instruction | count |", "|---|---|"]
    rows += [f"| `{m}` | {n} |" for m, n in sorted(sass.items()) if m.startswith(("F2I", "FRND"))]
    return "\n".join(rows)


# --8<-- [start:indexing]
@cute.kernel
def sum_of_value(src: cute.Tensor, dst: cute.Tensor):
    r = cute.make_rmem_tensor((VALUES,), cutlass.BFloat16)
    r.store(src.load())
    v = r.load().to(cutlass.Float32)  # a value
    s = cutlass.Float32(0.0)
    for i in cutlass.range(VALUES, unroll_full=True):
        s += v[i]  # index the value
    dst[0] = s


@cute.kernel
def sum_of_tensor(src: cute.Tensor, dst: cute.Tensor):
    r = cute.make_rmem_tensor((VALUES,), cutlass.BFloat16)
    r.store(src.load())
    s = cutlass.Float32(0.0)
    for i in cutlass.range(VALUES, unroll_full=True):
        s += r[i].to(cutlass.Float32)  # index the register tensor
    dst[0] = s
# --8<-- [end:indexing]


def indexing_table() -> str:
    """Registers, local memory and local loads/stores of the two sums, compiled for sm_90a."""
    src = make_fake_compact_tensor(cutlass.BFloat16, (VALUES,), assumed_align=16)
    dst = make_fake_compact_tensor(cutlass.Float32, (1,), assumed_align=16)
    rows = ["| kernel | registers | local bytes | stack bytes | `LDL` + `STL` | `FADD` |", "|---|---|---|---|---|---|"]
    for kernel in (sum_of_value, sum_of_tensor):
        compiled = compile_for(launch_one, src, dst, kernel)
        (res,) = resource_usage(compiled.artifacts.CUBIN)
        sass = sass_counts(compiled)
        local = opcode_count(sass, "LDL") + opcode_count(sass, "STL")
        rows.append(f"| `{kernel.__name__}` | {res.registers} | {res.local_bytes} | {res.stack_bytes} | {local} | "
                    f"{opcode_count(sass, 'FADD')} |")  # fmt: skip
    return "\n".join(rows)


# --8<-- [start:mistakes]
@cute.kernel
def assign_into_value(src: cute.Tensor, dst: cute.Tensor):
    v = src.load()
    v[0] = cutlass.BFloat16(1.0)  # a value is immutable: write into a tensor instead


@cute.kernel
def store_wrong_shape(src: cute.Tensor, dst: cute.Tensor):
    r = cute.make_rmem_tensor((VALUES // 2,), cutlass.BFloat16)
    r.store(src.load())  # 8 values into a 4-element tensor
# --8<-- [end:mistakes]


def _compile_one(kernel: object) -> None:
    src = make_fake_compact_tensor(cutlass.BFloat16, (VALUES,), assumed_align=16)
    compile_for(launch_one, src, src, kernel)


@expect(raises=TypeError, message="Vector is immutable")
def error_assign_into_value() -> None:
    _compile_one(assign_into_value)


@expect(raises=ValueError, message="lhs and rhs must have the same shape")
def error_store_wrong_shape() -> None:
    _compile_one(store_wrong_shape)
