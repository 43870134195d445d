"""Compile once: ``plan.plan(config).compile(shape, arch)`` cached in memory and on disk.

The key is the SHA-256 of the plan's source fingerprint (its import closure, see
:mod:`mla_var3.kernel.fingerprint`), the DSL version and the CUDA version it compiles with,
the arch, the config, the dtype and the shape params the binary is specialised on
(``KernelPlan.static_shape_params``: a kernel compiled for dynamic M, N, K has none, so every
shape shares its entry). A source edit changes the key, so a stale entry is never returned.

- **Memory**: the :class:`~mla_var3.kernel.backends.Compiled` object, for the life of the
  process (any backend).
- **Disk** (CuTe DSL kernels): ``$MLA_VAR3_CACHE_DIR/<key>/`` (default
  ``~/.cache/mla_var3/compile/<key>/``) holds ``kernel.cubin``, ``function.o`` (the
  launchable host function and its cubin, written by the DSL's ``dump_to_object`` and read
  back by ``cute.runtime.load_module`` in ~2 ms) and ``meta.json`` (compile seconds, dynamic
  SMEM, resources and SASS from :mod:`mla_var3.analysis`). Entries are written to a temporary
  folder and renamed into place. An entry that fails to parse or whose files do not match
  their recorded hashes is deleted and recompiled.
- **Facts**: what only the compile itself shows -- a number in the host IR, a size the traced
  host object computed -- is gone once the binary is on disk. A caller that needs such a fact
  passes ``facts={name: probe}`` (a :data:`FactProbe`); the compile records each value in the
  entry's ``meta.json`` under ``facts``, and a hit returns them as ``CompileResult.facts``. An
  entry that lacks a requested fact (written before the caller asked for it) is compiled again
  and rewritten with it, keeping the facts it had. :func:`host_launch_smem` is one probe: the
  dynamic SMEM of every launch in the host IR.

On a machine without a GPU the DSL's object export fails ("Failed to dump object file with
PIC relocation": its JIT cannot resolve the ``_cuda*`` runtime symbols) unless the DSL
runtime library is loaded into the process first with ``RTLD_GLOBAL``;
:func:`_export_object` does that. If the export still fails, the entry has no
``function.o``: compile-only requests are served from disk and runs recompile once per
process.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from mla_var3.analysis import AnalysisError, CubinAnalysis, analyze_cubin
from mla_var3.atomic_file import write_atomic
from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import Compiled, Kernel
from mla_var3.kernel.fingerprint import plan_fingerprint
from mla_var3.kernel.plan import Config, KernelPlan, Shape, config_slug, shape_slug

CACHE_ENV = "MLA_VAR3_CACHE_DIR"
SCHEMA_VERSION = 1
META = "meta.json"
CUBIN = "kernel.cubin"
OBJECT = "function.o"

FactProbe = Callable[[Kernel], Callable[[Compiled], Any]]
"""Given the kernel a plan returned, before it compiles (the probe may wrap the kernel's hooks to see
what the compile builds), the collector that returns one JSON value about the fresh compile."""


def host_launch_smem(kernel: Kernel) -> Callable[[Compiled], list[int]]:
    """Probe: the dynamic SMEM (bytes) of each kernel launch the compiled host function makes, read
    from its host IR (:func:`~mla_var3.kernel.cute_python.attention.example_kernel.launch_smem_bytes`)."""
    from mla_var3.kernel.cute_python.attention.example_kernel import launch_smem_bytes

    return lambda compiled: launch_smem_bytes(compiled.fn.ir_module)


@dataclass
class _Entry:
    compiled: Compiled
    analysis: CubinAnalysis | None
    analysis_error: str | None
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class CompileResult:
    """One compile request: what it returned, where it came from and what it cost.

    ``source`` is ``"memory"`` or ``"disk"`` (warm) or ``"compile"`` (cold); ``seconds`` is
    what this request took (key, lookup and load on a hit; key, compile, analysis and store
    on a miss), not counting the one-time import of the DSL; ``cold_s`` is the compile time
    of the entry as first built and ``analysis_s`` the cuobjdump + nvdisasm time of a miss.
    """

    compiled: Compiled
    key: str
    source: str
    seconds: float
    cold_s: float
    analysis: CubinAnalysis | None
    analysis_error: str | None = None
    analysis_s: float = 0.0
    entry: Path | None = None
    notes: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def warm(self) -> bool:
        return self.source != "compile"

    def timing_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "warm": self.warm,
            "seconds": self.seconds,
            "cold_s": self.cold_s,
            "analysis_s": self.analysis_s,
            "key": self.key,
            "entry": str(self.entry) if self.entry else None,
            "notes": list(self.notes),
        }

    def analysis_dict(self) -> dict[str, Any] | None:
        """Resources, dynamic SMEM and SASS (:meth:`CubinAnalysis.to_dict`), or why they are missing."""
        if self.analysis is not None:
            return self.analysis.to_dict()
        if self.analysis_error is not None:
            return {"error": self.analysis_error, "dynamic_smem_bytes": self.compiled.dynamic_smem_bytes}
        return None


_MEMORY: dict[str, _Entry] = {}


def clear_memory_cache() -> None:
    """Forget every compiled function held in this process (the disk cache stays)."""
    _MEMORY.clear()


def cache_dir() -> Path:
    """``$MLA_VAR3_CACHE_DIR``, else ``~/.cache/mla_var3/compile``."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "mla_var3" / "compile"


@cache
def dsl_identity() -> str:
    """``cutlass-dsl <version> cuda <major.minor>``: the compiler the key depends on."""
    import cutlass
    from cutlass.base_dsl.version_info import CUDA_VERSION

    return f"cutlass-dsl {cutlass.__version__} cuda {CUDA_VERSION.major}.{CUDA_VERSION.minor}"


def key_parts(plan: KernelPlan, config: Config, shape: Shape, arch: Arch) -> dict[str, str]:
    """What the cache key hashes, by name (stored in each entry's meta for inspection)."""
    static = plan.static_shape(shape)
    return {
        "kernel": plan.name,
        "backend": plan.backend,
        "fingerprint": plan_fingerprint(type(plan)),
        "dsl": dsl_identity() if plan.backend == "cute" else "-",
        "arch": arch.name,
        "config": config_slug(config),
        "shape": shape_slug(static, plan.dtype) if static else f"any-shape-{plan.dtype}",
    }


def cache_key(parts: dict[str, str]) -> str:
    """The entry's name: SHA-256 of :func:`key_parts` as sorted JSON."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def compile_cached(
    plan: KernelPlan,
    config: Config,
    shape: Shape,
    arch: Arch | str,
    *,
    need_function: bool = True,
    facts: Mapping[str, FactProbe] | None = None,
) -> CompileResult:
    """``plan.plan(config).compile(shape, arch)``, from memory, disk or a fresh compile.

    ``need_function=False`` (compile-only) accepts a disk entry without loading its launchable
    function; ``Compiled.fn`` is then ``None``. ``facts`` names the facts the caller needs
    (``CompileResult.facts``); an entry without every one of them is not a hit.
    """
    if plan.backend == "cute":
        dsl_identity()  # imports the DSL once per process, outside the timed part
    start = time.perf_counter()
    arch = arch if isinstance(arch, Arch) else Arch.parse(arch)
    probes = dict(facts or {})
    parts = key_parts(plan, config, shape, arch)
    key = cache_key(parts)
    entry = _MEMORY.get(key)
    known = dict(entry.facts) if entry is not None else {}
    if (
        entry is not None
        and (entry.compiled.fn is not None or not need_function)
        and probes.keys() <= known.keys()
    ):
        return _result(entry, key, "memory", start, None)
    notes: list[str] = []
    folder = cache_dir() / key
    if plan.backend == "cute" and folder.exists():
        try:
            entry = _load(folder, key, need_function)
        except Exception as exc:  # any unreadable entry (bad JSON, hash, DSL load error) is rebuilt
            notes.append(f"cache entry {folder} was unusable ({type(exc).__name__}: {exc}); recompiled")
            shutil.rmtree(folder, ignore_errors=True)
            entry = None
        if entry is not None:
            known.update(entry.facts)
            missing = sorted(probes.keys() - entry.facts.keys())
            if not missing:
                _MEMORY[key] = entry
                return _result(entry, key, "disk", start, folder, notes)
            notes.append(
                f"cache entry {folder} lacks the facts {', '.join(missing)}; recompiled to record them"
            )
    kernel = plan.plan(config)
    collectors = {name: probe(kernel) for name, probe in probes.items()}
    compiled = kernel.compile(shape, arch)
    fresh = {name: _json_value(name, collect(compiled)) for name, collect in collectors.items()}
    analysis_start = time.perf_counter()
    analysis, error = _analyze(compiled)
    analysis_s = time.perf_counter() - analysis_start
    entry = _Entry(compiled, analysis, error, {**known, **fresh})
    stored = None
    if compiled.cubin:
        stored = _store(folder, key, parts, entry, notes)
    _MEMORY[key] = entry
    result = _result(entry, key, "compile", start, stored, notes)
    result.analysis_s = analysis_s
    return result


def _result(
    entry: _Entry, key: str, source: str, start: float, folder: Path | None, notes: list[str] | None = None
) -> CompileResult:
    return CompileResult(
        compiled=entry.compiled,
        key=key,
        source=source,
        seconds=time.perf_counter() - start,
        cold_s=entry.compiled.compile_s,
        analysis=entry.analysis,
        analysis_error=entry.analysis_error,
        entry=folder,
        notes=notes or [],
        facts=dict(entry.facts),
    )


def _json_value(name: str, value: Any) -> Any:
    """``value`` as JSON reads it back (tuples become lists), or one error naming the fact."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"compile fact {name!r} is not JSON ({exc}): a FactProbe must return JSON values"
        ) from exc


def _analyze(compiled: Compiled) -> tuple[CubinAnalysis | None, str | None]:
    if not compiled.cubin:
        return None, None
    try:
        analysis = analyze_cubin(compiled.cubin, compiled.arch, compiled.dynamic_smem_bytes)
    except AnalysisError as exc:
        return None, str(exc)
    compiled.kernel_names = tuple(r.kernel for r in analysis.resources)
    return analysis, None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- disk ---------------------------------------------------------------------------------
def _store(folder: Path, key: str, parts: dict[str, str], entry: _Entry, notes: list[str]) -> Path | None:
    """Write the entry atomically (temporary folder, then rename); the folder, or None on failure."""
    compiled = entry.compiled
    assert compiled.cubin is not None
    prefix = f"k{key[:24]}"
    obj = _export_object(compiled.fn, prefix, notes)
    meta = {
        "schema_version": SCHEMA_VERSION,
        "key": key,
        "key_parts": parts,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "compile_s": compiled.compile_s,
        "arch": compiled.arch,
        "dynamic_smem_bytes": compiled.dynamic_smem_bytes,
        "kernel_names": list(compiled.kernel_names),
        "cubin_sha256": _sha256(compiled.cubin),
        "object": {"prefix": prefix, "sha256": _sha256(obj)} if obj else None,
        "analysis": entry.analysis.to_dict() if entry.analysis else None,
        "facts": {**_stored_facts(folder, key), **entry.facts},
    }
    tmp = folder.parent / f".tmp-{key[:16]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir(parents=True)
        (tmp / CUBIN).write_bytes(compiled.cubin)
        if obj:
            (tmp / OBJECT).write_bytes(obj)
        (tmp / META).write_text(json.dumps(meta, indent=1) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(tmp, folder)
    except OSError as exc:
        notes.append(f"could not write the compile cache entry {folder}: {exc}")
        shutil.rmtree(tmp, ignore_errors=True)
        return folder if (folder / META).is_file() else None
    return folder


def _stored_facts(folder: Path, key: str) -> dict[str, Any]:
    """The facts an existing entry of the same key recorded (another process may have asked for
    others), so a rewrite keeps them; nothing if the entry is absent or unreadable."""
    try:
        meta = json.loads((folder / META).read_text())
    except (OSError, ValueError):
        return {}
    facts = meta.get("facts") if isinstance(meta, dict) and meta.get("key") == key else None
    return facts if isinstance(facts, dict) else {}


def _load(folder: Path, key: str, need_function: bool) -> _Entry | None:
    """The entry in ``folder``; None if it lacks a launchable function that is needed.

    Raises (``ValueError``, ``OSError``, a DSL error, ...) when the entry is corrupt.
    """
    meta = json.loads((folder / META).read_text())
    if meta.get("schema_version") != SCHEMA_VERSION or meta.get("key") != key:
        raise ValueError("schema or key mismatch")
    cubin = (folder / CUBIN).read_bytes()
    if _sha256(cubin) != meta["cubin_sha256"]:
        raise ValueError("kernel.cubin does not match its recorded hash")
    fn = None
    if need_function:
        if not meta["object"]:
            return None  # compiled where the object export failed: recompile to launch
        fn = _load_object(folder / OBJECT, meta["object"])
    compiled = Compiled(
        fn=fn,
        arch=meta["arch"],
        cubin=cubin,
        compile_s=float(meta["compile_s"]),
        dynamic_smem_bytes=meta["dynamic_smem_bytes"],
        kernel_names=tuple(meta["kernel_names"]),
    )
    facts = meta.get("facts") or {}  # entries written before facts existed have none
    if not isinstance(facts, dict):
        raise ValueError("facts is not a JSON object")
    if meta["analysis"] is not None:
        return _Entry(compiled, CubinAnalysis.from_dict(meta["analysis"]), None, facts)
    analysis, error = _analyze(compiled)
    if analysis is not None:  # the tools were missing when the entry was written
        meta["analysis"] = analysis.to_dict()
        meta["kernel_names"] = list(compiled.kernel_names)
        write_atomic(folder / META, json.dumps(meta, indent=1) + "\n")
    return _Entry(compiled, analysis, error, facts)


def _load_object(path: Path, info: dict[str, str]) -> Any:
    data = path.read_bytes()
    if _sha256(data) != info["sha256"]:
        raise ValueError("function.o does not match its recorded hash")
    import cutlass.cute as cute

    _preload_dsl_runtime()
    return cute.runtime.load_module(str(path))[info["prefix"]]


@cache
def _preload_dsl_runtime() -> None:
    """Load the DSL runtime library globally so the DSL's JIT can resolve ``_cuda*`` symbols."""
    from cutlass.cutlass_dsl import CuTeDSL

    for lib in CuTeDSL._get_dsl().get_shared_libs():
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)


def _export_object(fn: Any, prefix: str, notes: list[str]) -> bytes | None:
    """The compiled function as an object file (host launcher + cubin), or None with a note."""
    try:
        _preload_dsl_runtime()
        return fn.dump_to_object(prefix)
    except Exception as exc:  # the DSL raises its own error types; any failure just skips the object
        notes.append(f"object export failed ({type(exc).__name__}); runs will recompile once per process")
        return None
