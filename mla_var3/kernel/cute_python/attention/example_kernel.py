"""``ExampleKernel``: compile and launch a CUTLASS attention example that ``CuteKernel`` alone cannot.

CUTLASS's Blackwell attention examples (``mla_decode_fp16.py``, ``mla_decode_fp8.py``,
``fmha.py``) differ from a plain ``@cute.jit`` host function in four ways, one hook each:

- **The host object depends on the shape.** Their constructors take what our workload calls
  a shape (MLA: the page size; FMHA: the mask type, which follows the causal flag and the KV
  length), so ``host_for(shape)`` builds the object per compile.
- **They ask the GPU while tracing.** FMHA's persistent grid calls
  ``HardwareInfo().get_device_multiprocessor_count()`` inside ``__call__``; without a driver
  that fails. :func:`hardware_info_stub` answers with a B200's SM count for the compile.
- **Their SMEM size lives only in the compiled host code** (a struct local to ``__call__``);
  :func:`launch_smem_bytes` reads the dynamic SMEM of every launch from the host IR, and the
  largest becomes ``Compiled.dynamic_smem_bytes``.
- **Their outputs may need one fix-up** to match our reference (MLA writes a base-2 LSE);
  ``after_launch(inputs, outputs)`` runs after every launch, inside the timed region.

Everything else -- options, fake-tensor compile, the stream appended last, binding arguments
once -- is :class:`~mla_var3.kernel.backends.CuteKernel`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import Compiled, CuteKernel
from mla_var3.kernel.plan import Shape, Tensors

B200_SM_COUNT = 148  # SMs of a B200 (sm_100a): what the examples' HardwareInfo would report there

# A launch in the DSL's host IR fills a CUlaunchConfig: (grid[3], block[3], dynamic SMEM, stream,
# attributes, attribute count); field 2 is stored from an i64 constant when the size is static.
_SMEM_FIELD_RE = re.compile(
    r"(%\d+) = llvm\.getelementptr %\d+\[0, 2\] : \(!llvm\.ptr\) -> !llvm\.ptr, "
    r"!llvm\.struct<\(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32\)>\s*\n\s*llvm\.store (%\d+), \1 "
)
_I64_CONSTANT_RE = re.compile(r"(%\d+) = llvm\.mlir\.constant\((\d+) : i64\) : i64")


def launch_smem_bytes(ir_module: Any) -> list[int]:
    """The dynamic SMEM (bytes) of each kernel launch in a compiled function's host IR, in launch order."""
    sizes: list[int] = []
    for function in re.split(r"\n  llvm\.func ", str(ir_module)):
        constants = dict(_I64_CONSTANT_RE.findall(function))
        sizes += [
            int(constants[value]) for _, value in _SMEM_FIELD_RE.findall(function) if value in constants
        ]
    return sizes


def fake_vector(dtype: Any, size: int | None = None, align: int = 16) -> Any:
    """A 1-D tensor-free stand-in: of dynamic length, as ``from_dlpack(t).mark_layout_dynamic()`` types
    it, or of the static ``size`` an unmarked ``from_dlpack(t)`` has."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    return make_fake_tensor(dtype, (size if size is not None else cute.sym_int(),), (1,), assumed_align=align)


def vector(t: Any, align: int = 16) -> Any:
    """A contiguous 1-D torch tensor typed like :func:`fake_vector` with a dynamic length."""
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(t, assumed_align=align).mark_layout_dynamic()


@contextmanager
def hardware_info_stub(module: ModuleType, sm_count: int = B200_SM_COUNT) -> Iterator[None]:
    """While tracing, ``module.HardwareInfo`` reports ``sm_count`` SMs instead of asking the driver."""

    class TargetHardwareInfo:
        def __init__(self, device_id: int = 0) -> None:
            self.device_id = device_id

        def get_device_multiprocessor_count(self) -> int:
            return sm_count

        def get_max_active_clusters(self, cluster_size: int) -> int:
            return sm_count // cluster_size

    saved = module.HardwareInfo
    module.HardwareInfo = TargetHardwareInfo
    try:
        yield
    finally:
        module.HardwareInfo = saved


@dataclass
class ExampleKernel:
    """A CUTLASS example's host object per shape, compiled and launched through ``CuteKernel``."""

    host_for: Callable[[Shape], Any]
    compile_args: Callable[[Shape], tuple[Any, ...]]
    launch_args: Callable[[Tensors, Tensors], tuple[Any, ...]]
    options: str = ""
    compile_context: Callable[[], AbstractContextManager[Any]] = nullcontext
    after_launch: Callable[[Tensors, Tensors], None] | None = None
    backend: ClassVar[str] = "cute"

    def _cute(self, host_fn: Any) -> CuteKernel:
        return CuteKernel(
            host_fn=host_fn,
            compile_args=self.compile_args,
            launch_args=self.launch_args,
            options=self.options,
        )

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        with self.compile_context():
            compiled = self._cute(self.host_for(shape)).compile(shape, arch)
        compiled.dynamic_smem_bytes = max(launch_smem_bytes(compiled.fn.ir_module), default=None)
        return compiled

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None:
        self.bind(compiled, inputs, outputs)()

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        run = self._cute(None).bind(compiled, inputs, outputs)
        fix = self.after_launch
        if fix is None:
            return run

        def run_and_fix() -> None:
            run()
            fix(inputs, outputs)

        return run_and_fix


__all__ = [
    "B200_SM_COUNT",
    "ExampleKernel",
    "fake_vector",
    "hardware_info_stub",
    "launch_smem_bytes",
    "vector",
]
