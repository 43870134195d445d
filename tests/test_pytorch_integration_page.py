"""The facts the PyTorch-integration concept page states about its snippet: the second request for a
compiled function is served from the dict, the custom op's schema, opcheck passing on meta tensors,
one graph with no break under ``torch.compile(fullgraph=True)``, the refusal of the unwrapped launch,
no CPU kernel for the op, and ``from_dlpack`` accepting a misaligned view."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest
import torch

from mla_var3.knowledge.expected import run


@pytest.fixture(scope="module")
def page() -> ModuleType:
    """The page's snippet, imported when a test runs: it imports ``torch._dynamo`` (~1 s), which a
    worker that only collects this file should not pay."""
    return importlib.import_module("snippets.cpu.pytorch_integration")


def test_second_request_is_served_from_the_dict_and_another_dtype_compiles(page: ModuleType) -> None:
    rows = page.cache_table().splitlines()[2:]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert [(c[1], c[3]) for c in cells] == [("cute.compile", "True"), ("dict", "True"), ("cute.compile", "False")]
    assert page.compiled_add(torch.bfloat16) is page.compiled_add(torch.bfloat16)


def test_schema_is_two_tensors_in_one_out_and_nothing_mutated(page: ModuleType) -> None:
    assert page.schema() == "mla_var3::vectorized_add(Tensor a, Tensor b) -> Tensor"


def test_opcheck_passes_every_test_on_meta_tensors(page: ModuleType) -> None:
    table = page.opcheck_table()
    for name in ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"):
        assert f"| `{name}` | SUCCESS |" in table


def test_fullgraph_trace_is_one_graph_with_the_op_as_one_node(page: ModuleType) -> None:
    code, explanation = page.trace()
    assert "torch.ops.mla_var3.vectorized_add(mul, l_y_)" in code and "relu" in code
    assert (explanation.graph_count, explanation.graph_break_count) == (1, 0)


def test_unwrapped_launch_is_refused_and_cpu_tensors_have_no_kernel() -> None:
    refused = run("snippets.cpu.pytorch_integration:raw_call_under_fullgraph")
    assert isinstance(refused.error, torch._dynamo.exc.Unsupported)
    assert "torch.cuda.current_stream()" in refused.error_text  # where the page says this CPU build stopped
    assert run("snippets.cpu.pytorch_integration:cpu_tensors_have_no_kernel").error is not None


def test_from_dlpack_does_not_check_the_assumed_alignment(page: ModuleType) -> None:
    offset, wrapped = page.misaligned_view_passes_from_dlpack()
    assert offset == 2 and wrapped.startswith("Tensor<0x") and wrapped.endswith("o (?):(1)>")
    assert int(wrapped[len("Tensor<"):wrapped.index("@")], 16) % 16 == 2  # the unaligned pointer, kept as is
