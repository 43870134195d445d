"""Compile time and caching, measured on the CPU that builds the site, and a compiled kernel exported.

``cache_walk`` compiles two of our kernels through the kernel lab's cache (``compile_cached``) into
an empty cache folder three times each -- cold, again in the same process, and after forgetting the
in-memory entry -- and reports what each request cost and where it was served from. ``key_parts``
shows what a cache entry is keyed on. ``export_walk`` exports a compiled function with the DSL's
ahead-of-time path (``export_to_c``) and loads it back with ``cute.runtime.load_module``.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.compile_cache import CACHE_ENV, cache_key, clear_memory_cache, compile_cached, key_parts
from mla_var3.kernel.cute_python.elementwise.add.vectorized.kernel import VectorizedAdd
from mla_var3.kernel.registry import get_plan
from mla_var3.knowledge.expected import program_name_only

KERNELS = (("elementwise_add", {"n": 1 << 20}), ("hopper_gemm_ws", {"m": 1024, "n": 1024, "k": 1024}))
ARCH = "sm_90a"


@contextmanager
def _empty_cache() -> Iterator[Path]:
    saved = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory() as folder:
        os.environ[CACHE_ENV] = folder
        clear_memory_cache()
        try:
            yield Path(folder)
        finally:
            clear_memory_cache()
            if saved is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = saved


# --8<-- [start:cache_walk]
def cache_walk() -> str:
    rows = ["| kernel | request | served from | seconds | cache entry files |", "|---|---|---|---|---|"]
    with _empty_cache() as folder, program_name_only():
        for name, shape in KERNELS:
            plan = get_plan(name)()
            config = plan.default_config()
            for request in ("first", "again, same process", "new process (memory cleared)"):
                if request.startswith("new process"):
                    clear_memory_cache()  # what a fresh process would find: only the disk
                result = compile_cached(plan, config, shape, ARCH, need_function=True)
                files = sorted(p.name for p in (folder / result.key).iterdir()) if (folder / result.key).is_dir() else []
                rows.append(f"| {name} | {request} | {result.source} | {result.seconds:.3f} | {', '.join(files)} |")
    return "\n".join(rows)
# --8<-- [end:cache_walk]


def key_table() -> str:
    """What the cache key of ``hopper_gemm_ws`` hashes for four requests (the fingerprint shortened)."""
    plan_class = get_plan("hopper_gemm_ws")
    config = plan_class().default_config()
    cube = {"m": 1024, "n": 1024, "k": 1024}
    requests = {
        "bf16, 1024³": (plan_class("bfloat16"), config, cube),
        "bf16, 2048³": (plan_class("bfloat16"), config, {"m": 2048, "n": 2048, "k": 2048}),
        "fp16, 1024³": (plan_class("float16"), config, cube),
        "bf16, 1024³, 3 stages": (plan_class("bfloat16"), {**config, "stages": 3}, cube),
    }
    parts = {name: key_parts(plan, cfg, shape, Arch.parse(ARCH)) for name, (plan, cfg, shape) in requests.items()}
    keys = {name: cache_key(p)[:12] for name, p in parts.items()}
    rows = ["| part | " + " | ".join(parts) + " |", "|---|" + "---|" * len(parts)]
    for part in next(iter(parts.values())):
        cells = [(v[:12] + "…" if part == "fingerprint" else v) for v in (p[part] for p in parts.values())]
        rows.append(f"| {part} | " + " | ".join(f"`{c}`" for c in cells) + " |")
    rows.append("| **key** | " + " | ".join(f"`{k}…`" for k in keys.values()) + " |")
    return "\n".join(rows)


def _load_dsl_runtime_globally() -> None:
    """Without a GPU driver the DSL's object export cannot resolve its runtime's ``_cuda*`` symbols unless
    the runtime library is loaded with RTLD_GLOBAL first (the kernel lab's disk cache does the same)."""
    from cutlass.cutlass_dsl import CuTeDSL

    for lib in CuTeDSL._get_dsl().get_shared_libs():
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)


# --8<-- [start:export]
def export_walk() -> str:
    """Export the compiled elementwise add as a C header and an object file, then load it back."""
    _load_dsl_runtime_globally()
    n = cute.sym_int()
    a, b, c = (make_fake_compact_tensor(cutlass.BFloat16, (n,), assumed_align=16) for _ in range(3))
    with program_name_only():
        compiled = cute.compile(VectorizedAdd(), a, b, c, cuda.CUstream(0), options=f"--gpu-arch {ARCH}")
    with tempfile.TemporaryDirectory() as folder:
        compiled.export_to_c(file_path=folder, file_name="vectorized_add", function_prefix="vectorized_add")
        files = {p.name: p.stat().st_size for p in sorted(Path(folder).iterdir())}
        header = (Path(folder) / "vectorized_add.h").read_text()
        module = cute.runtime.load_module(str(Path(folder) / "vectorized_add.o"))
        loaded = module.vectorized_add  # a launchable function: call it with tensors and a stream
    wrapper = next(line for line in header.splitlines() if "cute_dsl_vectorized_add_wrapper" in line)
    listing = ", ".join(f"`{name}` ({size:,} bytes)" for name, size in files.items())
    return (f"Files written: {listing}. The header's entry point:\n\n```c\n{wrapper.strip()}\n```\n\n"
            f"`load_module(...).vectorized_add` is a `{type(loaded).__name__}`.")  # fmt: skip
# --8<-- [end:export]
