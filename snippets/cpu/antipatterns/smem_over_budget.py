"""More pipeline stages than SMEM holds: the DSL compiles it without a word; the launch would fail.

``staged_buffers`` allocates ``stages`` A/B stages of a 128 x 256 x 64 bf16 GEMM tile (48 KiB each)
with ``SmemAllocator``. Compiled for sm_90a on the CPU with 4 and 5 stages, both compile; the host
IR records the dynamic SMEM each launch will ask for, the cubin the 1 KiB of static SMEM every DSL
kernel holds, and ``launch_budget`` sets their sum against the per-block limit ``cutlass.memory``
gives for sm_90. The 5-stage host code also carries the DSL's own verdict: a ``printf`` of an error
that it calls before the launch (``host_launch_message``); that check compares the dynamic SMEM alone
with the limit (``edge_of_the_check``). Our Hopper GEMM refuses the 5-stage config when it is
constructed (``over_budget_refused``), long before any compile.
"""

from __future__ import annotations

import re

import cutlass
import cutlass.cute as cute
import cutlass.memory
from cutlass.cute.runtime import make_fake_compact_tensor
from cutlass.memory import SmemAllocator

from mla_var3.analysis.resources import resource_usage
from mla_var3.kernel.cute_python.attention.example_kernel import launch_smem_bytes
from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for

TILE_M, TILE_N, TILE_K = 128, 256, 64
PRINTF_RE = re.compile(r'@(printfFormat_\d+)\("(\\0A)*(Error: kernel [^"]*?shared memory exceeds[^"]*?)(\\0A|\\00)*"\)')
ARGUMENT_RE = re.compile(r"(%\d+) = llvm\.mlir\.constant\((\d+) : i64\)")


# --8<-- [start:stages]
@cute.kernel
def staged_buffers(t: cute.Tensor, stages: cutlass.Constexpr):
    smem = SmemAllocator()
    sA = smem.allocate_tensor(cutlass.BFloat16, cute.make_layout((TILE_M, TILE_K, stages)), 1024)
    sB = smem.allocate_tensor(cutlass.BFloat16, cute.make_layout((TILE_N, TILE_K, stages)), 1024)
    tidx, _, _ = cute.arch.thread_idx()
    sA[tidx, 0, 0] = t[tidx].to(cutlass.BFloat16)
    sB[tidx, 0, stages - 1] = t[tidx + 128].to(cutlass.BFloat16)
    cute.arch.sync_threads()
    t[tidx] = sA[tidx, 0, 0].to(cutlass.Float32) + sB[tidx, 0, stages - 1].to(cutlass.Float32)
# --8<-- [end:stages]


@cute.kernel
def byte_buffer(t: cute.Tensor, nbytes: cutlass.Constexpr):
    """One SMEM buffer of exactly ``nbytes`` (to probe the edge of the DSL's check)."""
    buffer = SmemAllocator().allocate_tensor(cutlass.Int8, cute.make_layout(nbytes), 1024)
    tidx, _, _ = cute.arch.thread_idx()
    buffer[tidx * 1024] = t[tidx].to(cutlass.Int8)
    cute.arch.sync_threads()
    t[tidx] = buffer[nbytes - 1 - tidx].to(cutlass.Float32)


@cute.jit
def launch(t: cute.Tensor, kernel: cutlass.Constexpr, size: cutlass.Constexpr):
    kernel(t, size).launch(grid=[1, 1, 1], block=[128, 1, 1])


def compiled(kernel: object, size: int) -> object:
    """``kernel`` (``staged_buffers`` with ``size`` stages, or ``byte_buffer`` of ``size`` bytes) for sm_90a."""
    t = make_fake_compact_tensor(cutlass.Float32, (256,), assumed_align=16)
    return compile_for(launch, t, kernel, size, arch="sm_90a")


def launch_budget(stages: int) -> str:
    """One line: the stage count, the SMEM its compiled launch asks for, and the sm_90 limit per block."""
    fn = compiled(staged_buffers, stages)
    (dynamic,) = launch_smem_bytes(fn.ir_module)
    (resources,) = resource_usage(fn.artifacts.CUBIN)
    total, limit = dynamic + resources.static_smem_bytes, cutlass.memory.get_smem_capacity_in_bytes("sm_90")
    verdict = "fits" if total <= limit else "does NOT fit"
    return (f"{stages} stages: compiled; {dynamic} B dynamic + {resources.static_smem_bytes} B static = {total} B "
            f"of SMEM, {verdict} in the {limit} B a block may use")  # fmt: skip


def host_launch_message(fn: object) -> str | None:
    """The SMEM error the compiled host function ``fn`` prints before its launch, with its argument
    filled in, or ``None`` when the host function never prints it."""
    host = str(fn.ir_module)
    host_fn = host[host.index("llvm.func @cutlass_launch") :]
    for symbol, _, text, _ in PRINTF_RE.findall(host):
        use = re.search(rf"(%\d+) = llvm\.mlir\.addressof @{symbol} ", host_fn)
        if use is None:
            continue
        call = re.search(r"llvm\.call @printf\(%\d+, (%\d+)\)", host_fn[use.end() :])
        constants = dict(ARGUMENT_RE.findall(host_fn))
        return text.replace("%lld", constants[call.group(1)]) if call else text
    return None


@expect(prints="5 stages: compiled; 245760 B dynamic + 1024 B static = 246784 B of SMEM, does NOT fit in the 232448 B")
def silent_compile() -> None:
    for stages in (4, 5):
        print(launch_budget(stages))


@expect(prints="5 stages: Error: kernel '@kernels::@kernel_cutlass_staged_buffers_tensorptrf32gmemalign16o2561_5_0' "
               "launch shared memory exceeds current GPU arch sm_90a allowed. Allocated: 245760 bytes. Max: 232448 bytes.")  # fmt: skip
def launch_message() -> None:
    for stages in (4, 5):
        print(f"{stages} stages: {host_launch_message(compiled(staged_buffers, stages)) or 'no message'}")


@expect(prints="232448 B dynamic + 1024 B static = 233472 B: no message\n"
               "232449 B dynamic + 1024 B static = 233473 B: Error: kernel")  # fmt: skip
def edge_of_the_check() -> None:
    for nbytes in (232448, 232449):
        fn = compiled(byte_buffer, nbytes)
        (dynamic,) = launch_smem_bytes(fn.ir_module)
        (resources,) = resource_usage(fn.artifacts.CUBIN)
        message = host_launch_message(fn)
        total = dynamic + resources.static_smem_bytes
        print(f"{dynamic} B dynamic + {resources.static_smem_bytes} B static = {total} B: "
              f"{message[:13] if message else 'no message'}")  # fmt: skip


@expect(raises=ValueError, message="5 stages of 128x256x64 need 246784 B of SMEM, more than 231424 B")
def over_budget_refused() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v1.kernel import HopperGemmV1

    HopperGemmV1((TILE_M, TILE_N), stages=5)
