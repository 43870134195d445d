"""Where CUTLASS's CuTe DSL docs (pinned commit) and nvidia-cutlass-dsl 4.8.1 disagree, each case run.

One ``@expect`` function per disagreement, named after its entry on the docs-vs-DSL page: it runs
the docs' example (or the smallest program with the claim in it) and prints or raises what 4.8.1
really does. The declared fragment is the disagreement itself, so the build fails when a new DSL
version starts doing what the docs say -- the entry is then out of date.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
import numpy as np
import torch
from cutlass.base_dsl.common import DSLUserCodeError
from cutlass.cute.runtime import from_dlpack

from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import clean_ir, compile_for


# --8<-- [start:pass_in_dynamic_if]
@cute.jit
def pass_in_dynamic_if(predicate: cutlass.Boolean):
    if predicate:
        pass
# --8<-- [end:pass_in_dynamic_if]


@expect(prints="compiled")
def pass_in_a_dynamic_branch() -> None:
    compile_for(pass_in_dynamic_if, cutlass.Boolean(True))
    print("compiled")


# --8<-- [start:prefetch_stages]
@cute.jit
def pipelined_loop(bound: cutlass.Int32):
    for i in cutlass.range(bound, prefetch_stages=2):  # no TMA copy in the body
        cute.printf("%d", i)
# --8<-- [end:prefetch_stages]


@expect(prints="software pipelining ('prefetch_stages') skipped")
def prefetch_stages_needs_tma() -> None:
    compile_for(pipelined_loop, cutlass.Int32(8))


# --8<-- [start:static_layout_loop]
@cute.jit
def loop_over_static_size(tensor: cute.Tensor):
    for i in range(cute.size(tensor)):  # size 3: a compile-time constant
        cute.printf("tensor[{}]: {}", i, tensor[i])
# --8<-- [end:static_layout_loop]


@expect(prints="scf.for in the IR: 1")
def static_layout_loops_unroll() -> None:
    static = from_dlpack(torch.tensor([1, 2, 3], dtype=torch.uint16))
    print("scf.for in the IR:", clean_ir(loop_over_static_size, static).count("scf.for"))


# --8<-- [start:dynamic_layout]
@cute.jit
def print_layout(tensor):
    print(tensor.layout)
# --8<-- [end:dynamic_layout]


@expect(prints="(?,?):(?{i64},1)")
def dynamic_layout_prints_i64() -> None:
    compile_for(print_layout, torch.tensor([[1, 2], [3, 4]], dtype=torch.uint16))


# --8<-- [start:numpy_array]
@cute.jit
def takes_tensor(x: cute.Tensor, y: cutlass.Float16):
    pass
# --8<-- [end:numpy_array]


@expect(raises=DSLUserCodeError, message="but got <class 'numpy.ndarray'>")
def numpy_array_into_tensor_parameter() -> None:
    takes_tensor(np.random.randn(10, 10).astype(np.float16), 32)


# --8<-- [start:return_values]
@cute.jit
def add(b):
    return 1 + b
# --8<-- [end:return_values]


@expect(prints="add(2) returned Int32(?)")
def jit_return_values() -> None:
    print("add(2) returned", repr(add(2)))
    print("cute.compile(add, 2)(2) returned", repr(cute.compile(add, 2)(2)))


@expect(prints="compiled with --opt-level 7")
def opt_level_out_of_range() -> None:
    compile_for(pass_in_dynamic_if, cutlass.Boolean(True), options="--opt-level 7")
    print("compiled with --opt-level 7")


# --8<-- [start:dunder_artifacts]
@cute.kernel
def empty_kernel():
    pass


@cute.jit
def launch_empty():
    empty_kernel().launch(grid=[1, 1, 1], block=[32, 1, 1])
# --8<-- [end:dunder_artifacts]


@expect(raises=DSLUserCodeError, message="error[CONFIG_MALFORMED_COMPILE_OPTIONS]")
def nvdisasm_options_quoting() -> None:
    cute.compile(launch_empty, options="--gpu-arch sm_90a --keep-sass --nvdisasm-options '-c'")


@expect(prints="__ptx__ without --keep-ptx: None")
def dunder_artifacts_need_keep() -> None:
    plain = cute.compile(launch_empty, options="--gpu-arch sm_90a")
    print("__ptx__ without --keep-ptx:", plain.__ptx__)
    print("__cubin__ without --keep-cubin:", plain.__cubin__)
    kept = compile_for(launch_empty, options="--keep-ptx")
    print("__ptx__ with --keep-ptx:", f"{len(kept.__ptx__)} characters of PTX")


@expect(prints="import cutlass.cute.cuda: ModuleNotFoundError")
def aot_example_imports() -> None:
    import importlib

    for statement, attempt in (("import cutlass.cute.cuda", lambda: importlib.import_module("cutlass.cute.cuda")),
                               ("from cutlass.cute import from_dlpack", lambda: cute.from_dlpack)):  # fmt: skip
        try:
            attempt()
            print(f"{statement}: works")
        except (ImportError, AttributeError) as error:
            print(f"{statement}: {type(error).__name__}: {error}")


@expect(raises=DSLUserCodeError, message="error[CALL_MISSING_ARG]")
def compile_without_arguments() -> None:
    cute.compile(takes_tensor)


# --8<-- [start:list_append]
@cute.jit
def append_in_loop(n: cutlass.Int32):
    xs = [cutlass.Float32(0.0)]
    for _i in range(10):
        xs.append(cutlass.Float32(1.0))
# --8<-- [end:list_append]


@expect(raises=DSLUserCodeError, message="error[TYPE_UNSTABLE_JOIN]")
def list_append_in_loop() -> None:
    compile_for(append_in_loop, cutlass.Int32(10))


# --8<-- [start:and_types]
@cute.jit
def and_of_two_types(a: cutlass.Int32):
    b = cutlass.Boolean(True)
    print("a and b:", type(a and b).__name__)
# --8<-- [end:and_types]


@expect(prints="a and b: Int32")
def and_of_different_types() -> None:
    compile_for(and_of_two_types, cutlass.Int32(3))
