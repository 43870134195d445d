"""Calling a CuTe DSL kernel from PyTorch, run on a CPU: compile once, a custom op, what ``torch.compile`` sees.

``compiled_add`` compiles our ``VectorizedAdd`` for sm_90a from fake tensors once per dtype and keeps
the compiled function in a dict (``cache_table`` shows the second request served from it);
``vectorized_add`` is a ``torch.library`` custom op whose CUDA implementation launches that function
on torch's current stream and whose fake implementation gives the output's shape. This machine has
no GPU, so the CUDA implementation never runs here: ``opcheck_table`` and ``trace`` exercise the op on
meta tensors, which dispatch to the fake implementation. ``raw_call_under_fullgraph`` is the same
launch without the op, which ``torch.compile(fullgraph=True)`` refuses.
"""

from __future__ import annotations

import time
from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import torch

from mla_var3.kernel.cute_python.elementwise.add.vectorized.kernel import VectorizedAdd
from mla_var3.kernel.tensors import fake_dynamic_tensor, to_cute_dynamic
from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for

ARCH = "sm_90a"
ALIGN = 16  # bytes: what the compiled code assumes of every data pointer (128-bit vector accesses)
ANY_LENGTH = (1,)  # one dynamic mode, no divisibility promised: every length runs through one binary
_DTYPES = {torch.bfloat16: cutlass.BFloat16, torch.float16: cutlass.Float16, torch.float32: cutlass.Float32}


# --8<-- [start:compile_once]
_COMPILED: dict[tuple[torch.dtype, str], Any] = {}


def compiled_add(dtype: torch.dtype, arch: str = ARCH) -> Any:
    """The add for ``dtype``, compiled on the first request and kept for the life of the process."""
    key = (dtype, arch)
    if key not in _COMPILED:
        a, b, c = (fake_dynamic_tensor(_DTYPES[dtype], ANY_LENGTH, align=ALIGN) for _ in range(3))
        _COMPILED[key] = compile_for(VectorizedAdd(), a, b, c, cuda.CUstream(0), arch=arch)
    return _COMPILED[key]
# --8<-- [end:compile_once]


def cache_table() -> str:
    """Three requests from an empty cache: bf16, bf16 again, fp16; where each was served from and its cost."""
    _COMPILED.clear()
    rows = ["| request | served from | seconds | same object as the first |", "|---|---|---|---|"]
    first = None
    for dtype in (torch.bfloat16, torch.bfloat16, torch.float16):
        cached = (dtype, ARCH) in _COMPILED
        start = time.perf_counter()
        fn = compiled_add(dtype)
        seconds = time.perf_counter() - start
        first = fn if first is None else first
        rows.append(f"| `compiled_add({dtype})` | {'dict' if cached else 'cute.compile'} | {seconds:.6f} | "
                    f"{fn is first} |")  # fmt: skip
    return "\n".join(rows)


# --8<-- [start:custom_op]
@torch.library.custom_op("mla_var3::vectorized_add", mutates_args=(), device_types="cuda")
def vectorized_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A + B on the GPU: the compiled CuTe DSL add, launched on torch's current stream."""
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty_like(a)
    if any(t.data_ptr() % ALIGN for t in (a, b, c)):
        raise ValueError(f"vectorized_add: data pointers must be {ALIGN}-byte aligned; pass a fresh tensor")
    stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
    compiled_add(a.dtype)(*(to_cute_dynamic(t, ANY_LENGTH, ALIGN) for t in (a, b, c)), stream)
    return c


@vectorized_add.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """What the output looks like, computed without data: what torch.compile traces through."""
    torch._check(a.shape == b.shape and a.dim() == 1, lambda: "vectorized_add: two 1-D tensors of one shape")
    torch._check(a.dtype == b.dtype and a.dtype in _DTYPES, lambda: "vectorized_add: bf16, fp16 or fp32")
    return torch.empty_like(a, memory_format=torch.contiguous_format)
# --8<-- [end:custom_op]


def schema() -> str:
    """The op as torch's dispatcher knows it."""
    return str(torch.ops.mla_var3.vectorized_add.default._schema)


def meta_inputs(n: int = 1000) -> tuple[torch.Tensor, torch.Tensor]:
    """Two bf16 vectors with a shape and a dtype but no storage: they dispatch to the fake implementation."""
    return tuple(torch.empty(n, dtype=torch.bfloat16, device="meta") for _ in range(2))  # type: ignore[return-value]


# --8<-- [start:opcheck]
def opcheck_table() -> str:
    results = torch.library.opcheck(torch.ops.mla_var3.vectorized_add.default, meta_inputs())
    return "\n".join(["| opcheck test | result |", "|---|---|"] + [f"| `{k}` | {v} |" for k, v in results.items()])
# --8<-- [end:opcheck]


# --8<-- [start:trace]
def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.mla_var3.vectorized_add(x * 2, y).relu()


def trace() -> tuple[str, Any]:
    """``model`` compiled with ``fullgraph=True`` and run on meta tensors: the graph dynamo captured,
    and ``torch._dynamo.explain``'s count of graphs and graph breaks."""
    graphs: list[torch.fx.GraphModule] = []

    def keep_graph(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Any:
        graphs.append(gm)
        return gm.forward  # run the captured graph as it is (no inductor: no C++ compiler needed)

    torch._dynamo.reset()
    out = torch.compile(model, fullgraph=True, backend=keep_graph)(*meta_inputs())
    assert out.shape == (1000,) and out.device.type == "meta"
    return graphs[0].code.strip(), torch._dynamo.explain(model)(*meta_inputs())
# --8<-- [end:trace]


def trace_text() -> str:
    code, explanation = trace()
    return (f"```python\n{code}\n```\n\n`torch._dynamo.explain(model)`: {explanation.graph_count} graph, "
            f"{explanation.graph_break_count} graph breaks, ops {explanation.ops_per_graph[0]}.")  # fmt: skip


# --8<-- [start:raw]
def raw_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    c = torch.empty_like(a)
    stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
    compiled_add(a.dtype)(*(to_cute_dynamic(t, ANY_LENGTH, ALIGN) for t in (a, b, c)), stream)
    return c


@expect(raises=torch._dynamo.exc.Unsupported, message="For more details about this graph break")
def raw_call_under_fullgraph() -> None:
    torch._dynamo.reset()
    torch.compile(lambda x, y: raw_add(x * 2, y).relu(), fullgraph=True, backend="eager")(*meta_inputs())
# --8<-- [end:raw]


@expect(raises=NotImplementedError, message="Could not run 'mla_var3::vectorized_add' with arguments from the 'CPU'")
def cpu_tensors_have_no_kernel() -> None:
    x = torch.ones(8, dtype=torch.bfloat16)
    torch.ops.mla_var3.vectorized_add(x, x)


def misaligned_view_passes_from_dlpack() -> tuple[int, str]:
    """``x[1:]`` of a bf16 tensor starts 2 bytes past an aligned pointer; ``from_dlpack(..., assumed_align=16)``
    wraps it without complaint, so the op has to check."""
    x = torch.zeros(64, dtype=torch.bfloat16)
    view = x[1:]
    return view.data_ptr() % ALIGN, str(to_cute_dynamic(view, ANY_LENGTH, ALIGN))
