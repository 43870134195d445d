"""The first-kernel page, run on a CPU: tensors in, the compile of our elementwise add, the JIT cache.

``layout_table`` shows the layout a ``@cute.jit`` function sees for each way of passing a torch
tensor (static, dynamic, dynamic with divisibility, a fake tensor); ``compile_table`` compiles the
project's ``VectorizedAdd`` from fake tensors for sm_80, sm_90a and sm_100a and reads registers and
the SASS mix from each cubin; ``recompile_table`` calls a ``@cute.jit`` function the implicit way and
records, per call, whether its Python body was traced again and whether the DSL's cache grew.
"""

from __future__ import annotations

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
from cutlass.base_dsl.common import DSLUserCodeError
from cutlass.cute.runtime import from_dlpack, make_fake_compact_tensor

from mla_var3.analysis.resources import resource_usage
from mla_var3.kernel.cute_python.elementwise.add.vectorized.kernel import VectorizedAdd
from mla_var3.knowledge.expected import expect, program_name_only
from snippets.cpu.dsl_tools import compile_for, sass_classes

_seen: list[str] = []


# --8<-- [start:layouts]
@cute.jit
def show_layout(t: cute.Tensor):
    _seen.append(str(t.layout))  # a trace-time value: the layout the compiled code is specialised on


x = torch.zeros(1024, 64, dtype=torch.float16)  # a CPU tensor is enough to compile from
WAYS = {
    "from_dlpack(x)": lambda: from_dlpack(x),
    "from_dlpack(x).mark_layout_dynamic()": lambda: from_dlpack(x).mark_layout_dynamic(),
    "from_dlpack(x, assumed_align=16).mark_compact_shape_dynamic(mode=0, divisibility=8)":
        lambda: from_dlpack(x, assumed_align=16).mark_compact_shape_dynamic(mode=0, divisibility=8),
    "make_fake_compact_tensor(Float16, (sym_int(), 64), stride_order=(1, 0))":
        lambda: make_fake_compact_tensor(cutlass.Float16, (cute.sym_int(), 64), stride_order=(1, 0)),
}
# --8<-- [end:layouts]


def layout_table() -> str:
    """Each way of passing ``x`` and the layout the traced function saw."""
    rows = ["| argument | layout at trace time |", "|---|---|"]
    for name, make in WAYS.items():
        _seen.clear()
        with program_name_only():
            cute.compile(show_layout, make())
        rows.append(f"| `{name}` | `{_seen[0]}` |")
    return "\n".join(rows)


@expect(raises=DSLUserCodeError, message="error[ARG_ANNOTATION_MISMATCH]")
def torch_tensor_into_annotated_parameter() -> None:
    cute.compile(show_layout, x)  # a torch.Tensor where the parameter says cute.Tensor


# --8<-- [start:compile]
def compile_add(arch: str, dtype: type[cutlass.Numeric] = cutlass.BFloat16):
    """Our elementwise add compiled from fake tensors: no GPU, no data, any arch."""
    n = cute.sym_int()  # one dynamic length for A, B and C: any n runs through one binary
    a, b, c = (make_fake_compact_tensor(dtype, (n,), assumed_align=16) for _ in range(3))
    return compile_for(VectorizedAdd(threads=256, ilp=4), a, b, c, cuda.CUstream(0), arch=arch)
# --8<-- [end:compile]


def compile_table() -> str:
    """Registers, spills and the SASS classes that prove the pattern, per arch, from the cubins."""
    rows = ["| arch | kernels | registers | spills (local B) | 128-bit global loads / stores | scalar loads / stores |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for arch in ("sm_80", "sm_90a", "sm_100a"):
        compiled = compile_add(arch)
        resources = resource_usage(compiled.artifacts.CUBIN)
        classes = sass_classes(compiled)
        rows.append(
            f"| {arch} | {len(resources)} | {resources[0].registers} | {resources[0].local_bytes} | "
            f"{classes.get('ldg_128', 0)} / {classes.get('stg_128', 0)} | {classes.get('ldg_16', 0)} / {classes.get('stg_16', 0)} |"
        )
    return "\n".join(rows)


# --8<-- [start:recompile]
traced: list[str] = []


@cute.jit
def describe(t: cute.Tensor, scale: cutlass.Constexpr = 1):
    traced.append(f"{t.layout} scale={scale}")  # runs only while tracing


CALLS = {
    "x (1024, 64) fp16, static": lambda: describe(from_dlpack(x)),
    "another (1024, 64) fp16 tensor": lambda: describe(from_dlpack(torch.ones(1024, 64, dtype=torch.float16))),
    "(2048, 64): new shape": lambda: describe(from_dlpack(torch.zeros(2048, 64, dtype=torch.float16))),
    "(1024, 64) fp32: new dtype": lambda: describe(from_dlpack(torch.zeros(1024, 64))),
    "x, scale=2: new Constexpr": lambda: describe(from_dlpack(x), 2),
    "x, dynamic layout": lambda: describe(from_dlpack(x).mark_layout_dynamic()),
    "(2048, 64), dynamic layout": lambda: describe(from_dlpack(torch.zeros(2048, 64, dtype=torch.float16)).mark_layout_dynamic()),
}
# --8<-- [end:recompile]


def recompile_table() -> str:
    """Per implicit call: was the body traced again, and did the DSL's JIT cache get a new entry?"""
    from cutlass.cutlass_dsl import CuTeDSL

    cache = CuTeDSL._get_dsl().jit_cache
    cache.clear()  # start cold, also when `mkdocs serve` rebuilds in the same process
    rows = ["| call | body traced | new compiled entry | layout seen |", "|---|---|---|---|"]
    for name, call in CALLS.items():
        before, entries = len(traced), len(cache)
        with program_name_only():
            call()
        grew = len(cache) > entries
        rows.append(f"| {name} | {'yes' if len(traced) > before else 'no'} | {'yes' if grew else 'no (cache hit)'} | "
                    f"`{traced[-1] if len(traced) > before else ''}` |")  # fmt: skip
    return "\n".join(rows)
