"""cuTile kernels compiled ahead of time: export cubins on a CPU machine, launch them on a GPU without the compiler.

cuTile compiles a kernel just in time for the signature it infers from the real arguments at
launch (dtypes, ranks, unit strides, 16-byte divisibility of strides, shapes and base
addresses, singleton extents, constants). This module splits that in two:

- **Export** (a machine with ``cuda-tile[tileiras]``, no GPU needed):
  :meth:`CubinStore.ensure` derives the signature the runtime would infer from
  :class:`ArraySpec` descriptions of the arguments -- through cuTile's own inference
  (``KernelSignature.from_kernel_args`` on objects that expose only
  ``__cuda_array_interface__`` metadata) -- and writes the cubin with
  ``cuda.tile.compilation.export_kernel(..., gpu_code=..., output_format="cubin")``.
  Without a CUDA driver, that inference needs a ``libcuda.so.1`` to load: a stub whose every
  entry point succeeds is compiled with the system C compiler (it is asked only for function
  pointers and the driver version; nothing runs on it).
- **Launch** (the GPU machine, only the small ``cuda-tile`` wheel): :func:`aot_kernel` wraps a
  ``@ct.kernel`` so that the launch path's compile hook ``_compile(signature, context,
  compute_capability)`` -- private in cuda-tile 1.7.0, hence the version pin -- returns
  ``(cubin, symbol, None, ())`` from the store instead of compiling. A runtime signature that
  was not exported fails with the symbol it wanted.

Files (``$MLA_VAR3_CUTILE_DIR``, default ``build/cutile/``, ignored by git and carried to the GPU):
``cubins/<key>.cubin`` with ``<key>.json`` beside it (symbol, kernel, arch, versions), keyed by
the SHA-256 of the mangled symbol, the kernel's source file, the arch and the cuda-tile version
(mangled symbols exceed 255 characters, too long for a file name), and
``requests/<key>.json``: which cubin a (kernel, argument description) request resolved to, so
the GPU side finds it without deriving signatures.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import Compiled
from mla_var3.kernel.errors import UserError
from mla_var3.kernel.plan import Shape, Tensors
from mla_var3.project import REPO_ROOT

CUDA_TILE_VERSION = "1.7.0"
CUDA_TILE_DISTRIBUTION = "cuda-tile"
STORE_ENV = "MLA_VAR3_CUTILE_DIR"
DEFAULT_STORE = REPO_ROOT / "build" / "cutile"
EXPORT_HINT = "export it on a machine with cuda-tile[tileiras]==1.7.0 (nox -s cutile), then carry build/cutile"

# __cuda_array_interface__ typestr per dtype ('V2' is bfloat16 to cuTile's parser).
TYPESTR = {"bfloat16": "<V2", "float16": "<f2", "float32": "<f4", "int32": "<i4", "int64": "<i8"}
FAKE_BASE_ADDRESS = 1 << 20  # 16-byte aligned, as every torch allocation is

# A libcuda.so.1 for a machine without a driver: every entry point returns CUDA_SUCCESS, the
# driver version reads 13.0. cuTile loads it only to infer signatures here.
_DRIVER_STUB_C = r"""
#include <string.h>
static int ok(void) { return 0; }
static int driver_version(int *v) { *v = 13000; return 0; }
int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, int *status) {
    if (p) *p = strcmp(s, "cuDriverGetVersion") == 0 ? (void *)driver_version : (void *)ok;
    if (status) *status = 0;
    return 0;
}
"""


class CuTileAotError(UserError):
    """A cuTile kernel has no exported cubin for this request, or cuda-tile is not the pinned version."""


@dataclass(frozen=True)
class ArraySpec:
    """What cuTile's launch path sees of an array: dtype, shape, strides (elements; ``None``: contiguous)."""

    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None = None

    def fake(self) -> Any:
        """An object carrying only ``__cuda_array_interface__`` (no memory behind it)."""
        if self.dtype not in TYPESTR:
            raise CuTileAotError(f"ArraySpec dtype {self.dtype!r} is not one of {', '.join(TYPESTR)}")
        itemsize = int(TYPESTR[self.dtype][2])
        strides = None if self.strides is None else tuple(s * itemsize for s in self.strides)
        interface = {"shape": self.shape, "typestr": TYPESTR[self.dtype], "data": (FAKE_BASE_ADDRESS, False),
                     "strides": strides, "version": 3}
        return type("FakeArray", (), {"__cuda_array_interface__": interface})()

    @classmethod
    def of(cls, tensor: Any) -> ArraySpec:
        """The spec of a torch tensor (dtype name, shape, strides)."""
        return cls(str(tensor.dtype).removeprefix("torch."), tuple(tensor.shape), tuple(tensor.stride()))

    def describe(self) -> Any:
        return {"array": self.dtype, "shape": list(self.shape), "strides": None if self.strides is None else list(self.strides)}


def _describe(arg: Any) -> Any:
    if isinstance(arg, ArraySpec):
        return arg.describe()
    if isinstance(arg, bool | int):
        return {type(arg).__name__: arg}
    if isinstance(arg, float):
        return {"float": "dynamic"}  # a float parameter is a runtime scalar, not a constant
    raise CuTileAotError(f"cannot describe a cuTile argument of type {type(arg).__name__}")


def installed_version() -> str | None:
    try:
        return metadata.version(CUDA_TILE_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def require_cuda_tile() -> None:
    """cuda-tile must be installed at the pinned version (the compile hook is private)."""
    reason = unavailable_reason()
    if reason:
        raise CuTileAotError(reason)


@cache
def can_export() -> bool:
    """The cuTile compiler is here: ``cuda.tile._compile`` imports and finds a ``tileiras`` (pip or CUDA_HOME)."""
    try:
        from cuda.tile._compile import _find_compiler_bin

        _find_compiler_bin()
    except Exception:
        return False
    return True


def source_hash(kernel: Any) -> str:
    """SHA-256 of the file that defines the kernel's Python function (its body and helpers)."""
    return hashlib.sha256(Path(inspect.getfile(kernel._pyfunc)).read_bytes()).hexdigest()


def cubin_key(symbol: str, source: str, arch: str) -> str:
    return hashlib.sha256("\n".join((symbol, source, arch, CUDA_TILE_VERSION)).encode()).hexdigest()[:32]


def _sm_arch(arch: str) -> str:
    """cuTile's ``gpu_code`` for one of our arch names: sm_90a -> sm_90 (cuTile adds the suffix)."""
    return arch.rstrip("af")


@cache
def _load_driver() -> str:
    """Make ``libcuda.so.1`` loadable: the real driver, else the stub (compiled once into the store)."""
    try:
        ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
        return "driver"
    except OSError:
        pass
    stub = store_dir() / "stub" / "libcuda.so.1"
    if not stub.exists():
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            raise CuTileAotError("no CUDA driver and no C compiler for the driver stub: install gcc to export cuTile kernels")
        stub.parent.mkdir(parents=True, exist_ok=True)
        source = stub.parent / "libcuda_stub.c"
        source.write_text(_DRIVER_STUB_C, encoding="utf-8")
        subprocess.run([compiler, "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(stub), str(source)], check=True)
    ctypes.CDLL(str(stub), mode=ctypes.RTLD_GLOBAL)  # its soname satisfies cuTile's dlopen("libcuda.so.1")
    return "stub"


def runtime_signature(kernel: Any, args: Sequence[Any]) -> Any:
    """The signature cuTile's launch path infers for ``args`` (``ArraySpec`` for arrays, plain scalars).

    The launch path uses the lowest calling convention the constraints need: v2 once a
    singleton extent becomes a shape constant, v1 otherwise.
    """
    from cuda.tile.compilation import ArrayConstraint, CallingConvention, KernelSignature

    _load_driver()
    fakes = tuple(a.fake() if isinstance(a, ArraySpec) else a for a in args)
    v2 = KernelSignature.from_kernel_args(kernel, fakes, CallingConvention.cutile_python_v2())
    needs_v2 = any(isinstance(p, ArrayConstraint) and any(s is not None for s in p.shape_constant) for p in v2.parameters)
    return v2 if needs_v2 else KernelSignature.from_kernel_args(kernel, fakes, CallingConvention.cutile_python_v1())


def store_dir() -> Path:
    configured = os.environ.get(STORE_ENV)
    return Path(configured).expanduser() if configured else DEFAULT_STORE


@dataclass(frozen=True)
class CubinEntry:
    """One exported cubin and what it was exported for."""

    key: str
    symbol: str
    kernel: str
    arch: str
    cuda_tile: str
    source_sha256: str
    export_s: float
    date: str


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


class CubinStore:
    """The exported cubins under :func:`store_dir` (see the module docstring for the layout)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or store_dir()

    def cubin_path(self, key: str) -> Path:
        return self.root / "cubins" / f"{key}.cubin"

    def _request_path(self, kernel: Any, args: Sequence[Any], arch: str) -> Path:
        text = json.dumps({"kernel": _kernel_name(kernel), "source": source_hash(kernel), "arch": arch,
                           "cuda_tile": CUDA_TILE_VERSION, "args": [_describe(a) for a in args]}, sort_keys=True)
        return self.root / "requests" / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"

    def lookup(self, kernel: Any, args: Sequence[Any], arch: str) -> CubinEntry | None:
        request = self._request_path(kernel, args, arch)
        if not request.exists():
            return None
        entry = CubinEntry(**json.loads(request.read_text(encoding="utf-8")))
        return entry if self.cubin_path(entry.key).exists() else None

    def ensure(self, kernel: Any, args: Sequence[Any], arch: str) -> CubinEntry:
        """The cubin for this request: from the store, else exported now (needs the cuTile compiler)."""
        entry = self.lookup(kernel, args, arch)
        if entry is not None:
            return entry
        if not can_export():
            raise CuTileAotError(f"no exported cubin for {_kernel_name(kernel)} at {arch} for these arguments: {EXPORT_HINT}")
        return self.export(kernel, args, arch)

    def export(self, kernel: Any, args: Sequence[Any], arch: str) -> CubinEntry:
        import io

        from cuda.tile.compilation import export_kernel

        require_cuda_tile()
        signature = runtime_signature(kernel, args)
        start = time.perf_counter()
        buffer = io.BytesIO()
        export_kernel(kernel, [signature], buffer, gpu_code=_sm_arch(arch), output_format="cubin")
        source = source_hash(kernel)
        entry = CubinEntry(
            key=cubin_key(signature.symbol, source, arch),
            symbol=signature.symbol,
            kernel=_kernel_name(kernel),
            arch=arch,
            cuda_tile=CUDA_TILE_VERSION,
            source_sha256=source,
            export_s=round(time.perf_counter() - start, 2),
            date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        )
        _write_atomic(self.cubin_path(entry.key), buffer.getvalue())
        record = (json.dumps(asdict(entry), indent=1) + "\n").encode()
        _write_atomic(self.cubin_path(entry.key).with_suffix(".json"), record)
        _write_atomic(self._request_path(kernel, args, arch), record)
        return entry


def _kernel_name(kernel: Any) -> str:
    return kernel._pyfunc.__name__


@cache
def _aot_class() -> type:
    import cuda.tile as ct

    class AotKernel(ct.kernel):
        """A ``@ct.kernel`` whose launch-time compile reads the exported cubin (cuda-tile 1.7.0 hook)."""

        _store: CubinStore
        _arch: str
        _source: str

        def _compile(self, signature: Any, context: Any, compute_capability: tuple[int, int] | None = None) -> Any:
            from cuda.tile.compilation import mangle_kernel_name

            symbol = mangle_kernel_name(_kernel_name(self), signature)
            path = self._store.cubin_path(cubin_key(symbol, self._source, self._arch))
            if not path.exists():
                raise CuTileAotError(f"no exported cubin for the runtime signature {symbol} ({self._arch}): the launch "
                                     f"arguments differ from the exported ones (alignment, strides, shapes); {EXPORT_HINT}")
            return path.read_bytes(), symbol, None, ()

    return AotKernel


def aot_kernel(kernel: Any, arch: str, store: CubinStore | None = None) -> Any:
    """``kernel`` (a ``@ct.kernel``) launching from the store's cubins: ``ct.launch(stream, grid, it, args)``."""
    from dataclasses import asdict as options_dict

    require_cuda_tile()
    wrapped = _aot_class()(kernel._pyfunc, **options_dict(kernel._compiler_options))
    wrapped._store = store or CubinStore()
    wrapped._arch = arch
    wrapped._source = source_hash(kernel)
    return wrapped


@dataclass
class AotProgram:
    """The cuTile kernels one launch runs (launch order), each wrapped by :func:`aot_kernel`, their cubins,
    and the shape they were prepared for (``bind`` builds the launch arguments from it)."""

    kernels: dict[str, Any]
    entries: dict[str, CubinEntry]
    store: CubinStore
    shape: Shape

    @property
    def cubin(self) -> bytes:
        """The first kernel's cubin (the one resources and SASS are read from)."""
        first = next(iter(self.entries.values()))
        return self.store.cubin_path(first.key).read_bytes()


def prepare_program(requests: dict[str, tuple[Any, Sequence[Any]]], shape: Shape, arch: str,
                    store: CubinStore | None = None) -> AotProgram:
    """For each ``name -> (kernel, args)``: the cubin (looked up, else exported) and the launchable wrapper."""
    store = store or CubinStore()
    require_cuda_tile()
    entries = {name: store.ensure(kernel, args, arch) for name, (kernel, args) in requests.items()}
    kernels = {name: aot_kernel(kernel, arch, store) for name, (kernel, _) in requests.items()}
    return AotProgram(kernels, entries, store, dict(shape))


@dataclass
class AotCuTileKernel:
    """The backend kernel of an ahead-of-time cuTile plan (the :class:`~mla_var3.kernel.backends.Kernel` protocol).

    ``prepare(shape, arch)`` returns the :class:`AotProgram` (tensor-free: argument
    descriptions come from the shape); ``bind_fn(program, inputs, outputs)`` builds the launch
    arguments once and returns the no-argument launch (``ct.launch`` of each kernel in order).
    ``Compiled.cubin`` is the first kernel's cubin, so resources and SASS are analysed.
    """

    prepare: Callable[[Shape, Arch], AotProgram]
    bind_fn: Callable[[AotProgram, Tensors, Tensors], Callable[[], None]]
    backend: ClassVar[str] = "cutile"

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        start = time.perf_counter()
        program = self.prepare(shape, arch)
        return Compiled(fn=program, arch=arch.name, cubin=program.cubin, compile_s=time.perf_counter() - start)

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None:
        self.bind(compiled, inputs, outputs)()

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        return self.bind_fn(compiled.fn, inputs, outputs)


def unavailable_reason() -> str | None:
    """Why ahead-of-time cuTile kernels cannot run here (one line), or ``None``."""
    version = installed_version()
    if version != CUDA_TILE_VERSION:
        found = f"found {version}" if version else "not installed"
        return f"cuda-tile {CUDA_TILE_VERSION} is required ({found}): pip install cuda-tile=={CUDA_TILE_VERSION}"
    return None


def _parse_shape(text: str) -> dict[str, int]:
    try:
        return {key.strip(): int(value) for key, value in (item.split("=") for item in text.split(",") if item)}
    except ValueError:
        raise CuTileAotError(f"--shape takes name=value pairs separated by commas (b=128,t=8192), got {text!r}") from None


def export_main(argv: list[str] | None = None) -> int:
    """``python -m mla_var3.kernel.cutile.aot PLAN... [--shape b=2,t=63] [--check-shapes] [--all-configs]``.

    Exports the cubins of ahead-of-time cuTile plans (our cuTile kernels, TileGym's) for the
    given shapes (over each plan's defaults) and, with ``--check-shapes``, the plan's check
    shapes; needs ``cuda-tile[tileiras]``, no GPU. A PLAN is a registered name, or the dotted
    path of its variant package (imports only that package, not the whole registry).
    """
    import argparse
    import importlib
    import sys

    from mla_var3.kernel.registry import get_plan

    parser = argparse.ArgumentParser(prog="python -m mla_var3.kernel.cutile.aot", description=export_main.__doc__.split("\n")[0])
    parser.add_argument("names", nargs="+", help="registered plan names or variant package paths")
    parser.add_argument("--shape", action="append", default=[], help="shape flags over the defaults: b=128,t=8192")
    parser.add_argument("--check-shapes", action="store_true", help="also every check shape of the plan")
    parser.add_argument("--all-configs", action="store_true", help="every config (default: the first)")
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--dtype", default=None)
    args = parser.parse_args(argv)
    count, start = 0, time.perf_counter()
    try:
        for name in args.names:
            plan_class = importlib.import_module(name).PLAN if "." in name else get_plan(name)
            plan = plan_class(args.dtype)
            shapes = [plan.default_shape() | _parse_shape(text) for text in args.shape]
            shapes += list(plan.check_shapes) if args.check_shapes else []
            configs = plan._autotune_configs() if args.all_configs else [plan.default_config()]
            for shape in shapes:
                plan.validate_shape(shape)
                for config in configs:
                    plan.plan(config).compile(shape, Arch.parse(args.arch))
                    count += 1
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    files = list((store_dir() / "cubins").glob("*.cubin"))
    size = sum(f.stat().st_size for f in files)
    print(f"{count} programs ready in {time.perf_counter() - start:.0f} s; {store_dir()} holds {len(files)} cubins "
          f"({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(export_main())
