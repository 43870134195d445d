"""Two compiles sharing one DSL dump folder: the second one's cubin is read back as the first one's.

With ``--keep-cubin`` the DSL writes the cubin to ``<dump dir>/<host function name + argument
types>.<arch>.cubin`` while it compiles and reads that file back into ``artifacts.CUBIN`` when the
compile ends. Two host functions with one name and one signature -- here ``launch`` built by
:func:`host_for` around two different kernels, in the project two tutorial steps -- write the same
path. Compiled one after the other, each reads its own file back before the other writes; two
processes compiling at the same time (pytest workers) can interleave, and :func:`interleaved`
forces that interleaving: it holds the first compile between writing and reading back its cubin,
and lets a second process compile the other kernel into the same folder. The fix, one fresh
folder per compile, is checked the same way. A folder that does not exist is a quieter failure:
the DSL writes nothing and ``artifacts.CUBIN`` is left holding the path (:func:`missing_folder`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.base_dsl.jit_executor import JitFunctionArtifacts
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.analysis.sass import disassemble, parse_sass
from mla_var3.knowledge.expected import expect, program_name_only
from mla_var3.project import REPO_ROOT


@cute.kernel
def double_it(t: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    t[tidx] = t[tidx] * 2.0


@cute.kernel
def negate_it(t: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    t[tidx] = -t[tidx]


KERNELS = {"double_it": double_it, "negate_it": negate_it}


def host_for(kernel: Any) -> Callable[..., Any]:
    """A host function named ``launch`` that launches ``kernel``: same name, same signature for both."""

    @cute.jit
    def launch(t: cute.Tensor):
        kernel(t).launch(grid=[1, 1, 1], block=[32, 1, 1])

    return launch


# --8<-- [start:compile]
def compile_into(kernel_name: str, dump: str) -> Any:
    """``cute.compile`` of ``launch`` for ``kernel_name`` with its cubin kept in the folder ``dump``."""
    t = make_fake_compact_tensor(cutlass.Float32, (32,), assumed_align=16)
    with program_name_only():
        return cute.compile(host_for(KERNELS[kernel_name]), t,
                            options=f"--gpu-arch sm_90a --keep-cubin --dump-dir {dump}")  # fmt: skip
# --8<-- [end:compile]


def kernels_in(cubin: bytes | str) -> str:
    """The kernel names in a cubin, as ``double_it``/``negate_it``, or what ``artifacts.CUBIN`` holds instead."""
    if isinstance(cubin, str):
        return f"not a cubin but a {type(cubin).__name__}: {cubin!r}"
    names = parse_sass(disassemble(cubin))
    return ", ".join(short for short in KERNELS for name in names if f"_{short}_" in name)


@contextmanager
def another_process_compiles(kernel_name: str, dump: str) -> Iterator[None]:
    """While inside, the next artifact read-back of this process first waits for another process to
    compile ``kernel_name`` into ``dump`` (the unlucky timing of two concurrent compiles, forced)."""
    original = JitFunctionArtifacts.__post_init__

    def read_back_late(self: JitFunctionArtifacts) -> None:
        JitFunctionArtifacts.__post_init__ = original
        code = f"from snippets.cpu.antipatterns.shared_dump_dir import compile_into; compile_into({kernel_name!r}, {dump!r})"
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT, env=env, capture_output=True)
        original(self)

    JitFunctionArtifacts.__post_init__ = read_back_late
    try:
        yield
    finally:
        JitFunctionArtifacts.__post_init__ = original


def embedded_kernels(compiled: Any) -> str:
    """The kernel names in the binary the host code embeds (``@kernels_binary``), the one a call loads."""
    binary = next(line for line in str(compiled.ir_module).splitlines() if "@kernels_binary(" in line)
    return ", ".join(short for short in KERNELS if f"_{short}_" in binary)


def interleaved(shared: bool) -> str:
    """Compile ``double_it`` while another process compiles ``negate_it``, into one folder or two."""
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        other = first if shared else second
        with another_process_compiles("negate_it", other):
            compiled = compile_into("double_it", first)
        files = " ".join(sorted(p.name for p in Path(first).iterdir()))
    return (f"the folder holds {files}\n  artifacts.CUBIN holds {kernels_in(compiled.artifacts.CUBIN)}; "
            f"the binary the host code embeds holds {embedded_kernels(compiled)}")  # fmt: skip


@expect(prints="one folder for both, compiling double_it: the folder holds cutlass_launch_FakeTensorFloat32321.sm_90a.cubin\n"
               "  artifacts.CUBIN holds negate_it; the binary the host code embeds holds double_it\n"
               "a folder per compile, compiling double_it: the folder holds cutlass_launch_FakeTensorFloat32321.sm_90a.cubin\n"
               "  artifacts.CUBIN holds double_it; the binary the host code embeds holds double_it")  # fmt: skip
def symptom() -> None:
    print(f"one folder for both, compiling double_it: {interleaved(shared=True)}")
    print(f"a folder per compile, compiling double_it: {interleaved(shared=False)}")


@expect(prints="artifacts.CUBIN holds: not a cubin but a str")
def missing_folder() -> None:
    with tempfile.TemporaryDirectory() as parent:
        compiled = compile_into("double_it", os.path.join(parent, "not-created"))
        print(f"artifacts.CUBIN holds: {kernels_in(compiled.artifacts.CUBIN).replace(parent, '<tmp>')}")
