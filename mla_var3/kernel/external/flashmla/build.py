"""Build FlashMLA's SM90 dense MLA decode as a torch-free shared library (``third_party/flashmla/``).

    python -m mla_var3.kernel.external.flashmla.build [--jobs N] [--force]

FlashMLA (``deepseek-ai/FlashMLA``) dropped Hopper after commit :data:`FLASHMLA_COMMIT`, the
last with ``csrc/sm90``. Its sources are exported from a git dir at that commit, CUTLASS's C++
headers at the commit of FlashMLA's ``csrc/cutlass`` submodule, and both are compiled with
``nvcc`` for sm_90a only, with CUDA's runtime linked statically, together with our C ABI
(:file:`capi.cu`, replacing FlashMLA's torch binding). Nothing from either project is copied
into this repository: the sources live under ``build/flashmla/`` and the products
(``libflashmla_sm90.so`` and ``manifest.json``) under ``third_party/flashmla/``, both ignored.

Sources, offline first: ``$FLASHMLA_GIT_DIR`` and ``$CUTLASS_GIT_DIR`` (local clones or bare
mirrors that hold the commits), else a blob-less clone of the upstream URL under
``build/flashmla/``. The compiler: ``$NVCC``, else ``$CUDA_HOME/bin/nvcc``, else ``nvcc`` on
``PATH`` (CUDA 12.9 or newer).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from io import BytesIO
from pathlib import Path

from mla_var3.kernel.errors import UserError
from mla_var3.project import CUTLASS_GIT_DIR_ENV, REPO_ROOT

FLASHMLA_REPOSITORY = "https://github.com/deepseek-ai/FlashMLA"
FLASHMLA_COMMIT = "9241ae3ef9bac614dd25e45e507e089f888280e0"
CUTLASS_REPOSITORY = "https://github.com/NVIDIA/cutlass"
FLASHMLA_GIT_DIR_ENV = "FLASHMLA_GIT_DIR"
CUTLASS_SUBMODULE = "csrc/cutlass"
ARCH = "sm_90a"
ABI_VERSION = 1  # must match kAbiVersion in capi.cu

OUT_DIR = REPO_ROOT / "third_party" / "flashmla"
WORK_DIR = REPO_ROOT / "build" / "flashmla"
LIBRARY = "libflashmla_sm90.so"
MANIFEST = "manifest.json"
CAPI = Path(__file__).with_name("capi.cu")

# The scheduler, the combine kernel and the dense decode instantiations (FlashMLA's setup.py
# lists these among its sources); the torch binding csrc/api/ is replaced by capi.cu.
FLASHMLA_SOURCES = (
    "csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu",
    "csrc/smxx/decode/combine/combine.cu",
    "csrc/sm90/decode/dense/instantiations/bf16.cu",
    "csrc/sm90/decode/dense/instantiations/fp16.cu",
)
FLASHMLA_EXPORT = ("csrc",)
CUTLASS_EXPORT = ("include", "tools/util/include")
INCLUDE_DIRS = ("flashmla/csrc", "flashmla/csrc/kerutils/include", "flashmla/csrc/sm90", "cutlass/include",
                "cutlass/tools/util/include")
# FlashMLA's setup.py nvcc flags, less -lineinfo/--source-in-ptx (size) and the sm_100f target.
NVCC_FLAGS = (
    "-O3", "-std=c++20", "-DNDEBUG", "-D_USE_MATH_DEFINES", "-Wno-deprecated-declarations",
    "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr", "--expt-extended-lambda",
    "--use_fast_math", "--ptxas-options=--register-usage-level=10,--warn-on-spills",
    "-gencode", "arch=compute_90a,code=sm_90a", "-Xcompiler", "-fPIC",
)
LINK_FLAGS = ("-shared", "-cudart", "static", "-Xlinker", "--exclude-libs,ALL", "-Xlinker", "-s")


class FlashMlaBuildError(UserError):
    """The FlashMLA library cannot be built (missing sources, compiler or commit)."""


@dataclass(frozen=True)
class Manifest:
    """What ``manifest.json`` beside the library records about the build."""

    abi_version: int
    arch: str
    flashmla_repository: str
    flashmla_commit: str
    cutlass_commit: str
    nvcc: str
    flags: list[str]
    sources: list[str]
    library: str
    library_sha256: str
    library_bytes: int
    build_s: float
    date: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"

    @classmethod
    def read(cls, path: Path) -> Manifest:
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as error:
            raise FlashMlaBuildError(f"{path}: unreadable build manifest ({error}); rebuild with "
                                     "python -m mla_var3.kernel.external.flashmla.build --force") from None


def _git(git_dir: Path, *args: str, binary: bool = False) -> str | bytes:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise FlashMlaBuildError(f"git {' '.join(args[:2])} in {git_dir}: {message[-1] if message else 'failed'}")
    return done.stdout if binary else done.stdout.decode()


def git_dir_of(path: Path) -> Path:
    """The git dir of a clone (``path/.git``) or a bare mirror (``path`` itself)."""
    return path / ".git" if (path / ".git").exists() else path


def parse_submodule_commit(ls_tree_line: str, path: str = CUTLASS_SUBMODULE) -> str:
    """The commit of ``path`` from a ``git ls-tree <commit> <path>`` line (``160000 commit <sha>\\t<path>``)."""
    match = re.fullmatch(r"160000 commit ([0-9a-f]{40})\t(.+)", ls_tree_line.strip())
    if match is None or match.group(2) != path:
        raise FlashMlaBuildError(f"{path} is not a submodule in this tree (git ls-tree gave {ls_tree_line.strip()!r})")
    return match.group(1)


def submodule_commit(git_dir: Path, commit: str, path: str = CUTLASS_SUBMODULE) -> str:
    return parse_submodule_commit(str(_git(git_dir, "ls-tree", commit, path)), path)


def require_commit(git_dir: Path, commit: str, what: str, env: str) -> None:
    kind = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-t", commit], capture_output=True, text=True)
    if kind.stdout.strip() != "commit":
        raise FlashMlaBuildError(f"{what} commit {commit[:12]} is not in {git_dir}; point ${env} at a clone that has it")


def resolve_git_dir(env: str, url: str, name: str) -> Path:
    """``$env`` if set, else a blob-less bare clone of ``url`` under ``build/flashmla/``."""
    configured = os.environ.get(env)
    if configured:
        path = git_dir_of(Path(configured).expanduser())
        if not path.exists():
            raise FlashMlaBuildError(f"${env}={configured} does not exist; point it at a clone of {url}")
        return path
    path = WORK_DIR / f"{name}.git"
    if not path.exists():
        subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none", url, str(path)], check=True)
    return path


def export_tree(git_dir: Path, commit: str, paths: Sequence[str], dest: Path) -> None:
    """Write ``paths`` of ``commit`` under ``dest`` (``git archive``; no work tree needed)."""
    data = _git(git_dir, "archive", "--format=tar", commit, *paths, binary=True)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=BytesIO(bytes(data))) as archive:
        archive.extractall(dest, filter="data")


def find_nvcc() -> Path:
    for candidate in (os.environ.get("NVCC"), os.environ.get("CUDA_HOME") and f"{os.environ['CUDA_HOME']}/bin/nvcc",
                      shutil.which("nvcc")):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    raise FlashMlaBuildError("no nvcc found: set $NVCC or $CUDA_HOME (CUDA 12.9 or newer), or put nvcc on PATH")


def nvcc_version(nvcc: Path) -> str:
    out = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"release (\d+\.\d+), (V[\d.]+)", out)
    return f"{match.group(1)} ({match.group(2)})" if match else out.strip().splitlines()[-1]


def compile_command(nvcc: Path, source: Path, obj: Path, src_root: Path) -> list[str]:
    includes = [f"-I{src_root / d}" for d in INCLUDE_DIRS]
    return [str(nvcc), *NVCC_FLAGS, *includes, "-c", str(source), "-o", str(obj)]


def link_command(nvcc: Path, objects: Sequence[Path], library: Path) -> list[str]:
    return [str(nvcc), *LINK_FLAGS, "-gencode", "arch=compute_90a,code=sm_90a", *map(str, objects), "-o", str(library)]


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-30:])
        raise FlashMlaBuildError(f"nvcc failed on {Path(command[-3]).name}:\n{tail}")


def build(out_dir: Path = OUT_DIR, work_dir: Path = WORK_DIR, jobs: int | None = None) -> Manifest:
    """Export the pinned sources, compile, link; write the library and its manifest into ``out_dir``."""
    start = time.perf_counter()
    nvcc = find_nvcc()
    flashmla = resolve_git_dir(FLASHMLA_GIT_DIR_ENV, FLASHMLA_REPOSITORY, "flashmla")
    require_commit(flashmla, FLASHMLA_COMMIT, "FlashMLA", FLASHMLA_GIT_DIR_ENV)
    cutlass_commit = submodule_commit(flashmla, FLASHMLA_COMMIT)
    cutlass = resolve_git_dir(CUTLASS_GIT_DIR_ENV, CUTLASS_REPOSITORY, "cutlass")
    require_commit(cutlass, cutlass_commit, "CUTLASS (FlashMLA's csrc/cutlass)", CUTLASS_GIT_DIR_ENV)

    src_root = work_dir / "src"
    shutil.rmtree(src_root, ignore_errors=True)
    export_tree(flashmla, FLASHMLA_COMMIT, FLASHMLA_EXPORT, src_root / "flashmla")
    export_tree(cutlass, cutlass_commit, CUTLASS_EXPORT, src_root / "cutlass")

    objects_dir = work_dir / "obj"
    objects_dir.mkdir(parents=True, exist_ok=True)
    sources = [src_root / "flashmla" / s for s in FLASHMLA_SOURCES] + [CAPI]
    objects = [objects_dir / f"{i}-{s.stem}.o" for i, s in enumerate(sources)]
    commands = [compile_command(nvcc, s, o, src_root) for s, o in zip(sources, objects, strict=True)]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        list(pool.map(_run, commands))

    out_dir.mkdir(parents=True, exist_ok=True)
    library = out_dir / LIBRARY
    _run(link_command(nvcc, objects, library))
    data = library.read_bytes()
    manifest = Manifest(
        abi_version=ABI_VERSION,
        arch=ARCH,
        flashmla_repository=FLASHMLA_REPOSITORY,
        flashmla_commit=FLASHMLA_COMMIT,
        cutlass_commit=cutlass_commit,
        nvcc=nvcc_version(nvcc),
        flags=[*NVCC_FLAGS, *LINK_FLAGS],
        sources=[*FLASHMLA_SOURCES, "mla_var3/kernel/external/flashmla/capi.cu"],
        library=LIBRARY,
        library_sha256=hashlib.sha256(data).hexdigest(),
        library_bytes=len(data),
        build_s=round(time.perf_counter() - start, 1),
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    (out_dir / MANIFEST).write_text(manifest.to_json(), encoding="utf-8")
    return manifest


def is_built(out_dir: Path = OUT_DIR) -> bool:
    """The library and a manifest of this ABI and pin are there."""
    if not (out_dir / LIBRARY).exists() or not (out_dir / MANIFEST).exists():
        return False
    manifest = Manifest.read(out_dir / MANIFEST)
    return manifest.abi_version == ABI_VERSION and manifest.flashmla_commit == FLASHMLA_COMMIT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mla_var3.kernel.external.flashmla.build", description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=None, help="parallel nvcc processes (default: CPU count)")
    parser.add_argument("--force", action="store_true", help="rebuild even if the library is built")
    args = parser.parse_args(argv)
    try:
        if not args.force and is_built():
            print(f"{OUT_DIR / LIBRARY} is built at FlashMLA {FLASHMLA_COMMIT[:12]} (--force rebuilds)")
            return 0
        manifest = build(jobs=args.jobs)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    print(f"built {OUT_DIR / LIBRARY} ({manifest.library_bytes / 1e6:.2f} MB, {manifest.build_s:.0f} s, "
          f"FlashMLA {manifest.flashmla_commit[:12]}, CUTLASS {manifest.cutlass_commit[:12]}, nvcc {manifest.nvcc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
