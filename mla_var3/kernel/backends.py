"""Backend kernels a plan returns: ``CuteKernel``, ``TorchKernel`` and the ``CuTileKernel`` interface.

Every backend compiles without tensors (``compile``) and launches on real tensors
(``launch``). ``compile`` never touches a GPU for the CuTe DSL: fake tensors and the
``--gpu-arch`` option select the target, so any arch compiles on a CPU machine.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.plan import Shape, Tensors


@dataclass
class Compiled:
    """What a compile produced: a launchable function (in memory), the cubin, and timings."""

    fn: Any
    arch: str
    cubin: bytes | None
    compile_s: float
    dynamic_smem_bytes: int | None = None
    kernel_names: tuple[str, ...] = ()


@runtime_checkable
class Kernel(Protocol):
    """The interface every backend implements."""

    backend: ClassVar[str]

    def compile(self, shape: Shape, arch: Arch) -> Compiled: ...

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None: ...

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]: ...


@dataclass
class CuteKernel:
    """A ``@cute.jit`` host function plus how to build its arguments.

    ``compile_args(shape)`` returns the host function's arguments built from fake tensors
    and scalars (tensor-free); ``launch_args(inputs, outputs)`` returns the same arguments
    from real tensors. The CUDA stream is appended to both as the last argument.
    ``dynamic_smem_bytes`` is the kernel's SMEM budget per block (the cubin holds only the
    static part), when the kernel knows it.
    """

    host_fn: Callable[..., Any]
    compile_args: Callable[[Shape], tuple[Any, ...]]
    launch_args: Callable[[Tensors, Tensors], tuple[Any, ...]]
    options: str = ""
    dynamic_smem_bytes: Callable[[Shape], int] | None = None
    backend: ClassVar[str] = "cute"

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        import cuda.bindings.driver as cuda
        import cutlass.cute as cute

        # --keep-cubin writes *.cubin into a dump dir (the working directory by default) named after
        # the host function, and the DSL reads it back: one fresh folder per compile, else two
        # processes compiling host functions of the same name read each other's binary. The folder
        # must exist, else the DSL silently returns a path instead of the bytes.
        with tempfile.TemporaryDirectory(prefix="mla_var3-dsl-dump-") as dump:
            options = f"{self.options} --gpu-arch {arch.name} --keep-cubin --dump-dir {dump}".strip()
            start = time.perf_counter()
            fn = cute.compile(self.host_fn, *self.compile_args(shape), cuda.CUstream(0), options=options)
            seconds = time.perf_counter() - start
            cubin = fn.artifacts.CUBIN
        smem = self.dynamic_smem_bytes(shape) if self.dynamic_smem_bytes else None
        return Compiled(fn=fn, arch=arch.name, cubin=cubin, compile_s=seconds, dynamic_smem_bytes=smem)

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None:
        self.bind(compiled, inputs, outputs)()

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        """A no-argument launch with the CuTe tensors and stream built once (timing loops use it:
        building them per launch costs tens of microseconds of host time)."""
        import cuda.bindings.driver as cuda
        import torch

        args = (*self.launch_args(inputs, outputs), cuda.CUstream(torch.cuda.current_stream().cuda_stream))
        fn = compiled.fn
        return lambda: fn(*args)


@dataclass
class TorchKernel:
    """A PyTorch function (references, cuBLAS baselines): ``fn(inputs, outputs)`` fills outputs."""

    fn: Callable[[Tensors, Tensors], None]
    backend: ClassVar[str] = "torch"

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        return Compiled(fn=self.fn, arch=arch.name, cubin=None, compile_s=0.0)

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None:
        compiled.fn(inputs, outputs)

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        return lambda: compiled.fn(inputs, outputs)


@dataclass
class CuTileKernel:
    """The interface a cuTile kernel implements (the MLA issue fills it in).

    ``compile_fn(shape, arch)`` returns whatever cuTile compiled (tensor-free);
    ``launch_fn(compiled, inputs, outputs)`` runs it on the current stream.
    """

    compile_fn: Callable[[Shape, Arch], Any]
    launch_fn: Callable[[Any, Tensors, Tensors], None]
    extra: dict[str, Any] = field(default_factory=dict)
    backend: ClassVar[str] = "cutile"

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        start = time.perf_counter()
        fn = self.compile_fn(shape, arch)
        return Compiled(fn=fn, arch=arch.name, cubin=None, compile_s=time.perf_counter() - start)

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None:
        self.launch_fn(compiled.fn, inputs, outputs)

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        return lambda: self.launch_fn(compiled.fn, inputs, outputs)
