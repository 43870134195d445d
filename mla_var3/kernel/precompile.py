"""Compile on the CPU machine what a GPU run will launch, into a compile cache that travels with it.

    python -m mla_var3.kernel.precompile --cache-dir build/devcache TARGET...

A GPU call is short (minutes); compiling an MLA decode kernel takes ~10-20 s, so a queue of group
runs and GPU tests spends much of its time compiling unless the binaries come with it. This fills
``--cache-dir`` (the layout of :mod:`mla_var3.kernel.compile_cache`) for each TARGET at its plan's
default config (the config group runs and verify use), for ``--arch`` (default ``sm_90a``):

- ``<kernel>/<shape key>``: one kernel at one shape, e.g. ``mla_decode_v7/b1-s1-t8192-h128-page64-varlen0-bfloat16``;
- ``groups/<group>[/<shape glob>]``: every CuTe DSL member of a comparison group at its shapes;
- ``tests/<file>.py:<ATTR>@<kernel>[,<kernel>...]@<dtype>``: the shapes a test module lists in
  ``ATTR`` (a sequence of shape dicts), for those kernels and dtype.

On the GPU machine set ``MLA_VAR3_CACHE_DIR`` to the carried folder. A key is the plan's source
fingerprint, the DSL and CUDA versions, the arch, config, dtype and static shape parameters, so a
stale entry is never used: an edit after precompiling only costs the compile again.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from mla_var3.kernel.errors import UserError
from mla_var3.project import REPO_ROOT

Job = tuple[str, str, dict[str, int]]  # kernel, dtype, shape


def _kernel_jobs(spec: str) -> Iterator[Job]:
    from mla_var3.evidence.model import parse_shape_key

    kernel, _, key = spec.partition("/")
    shape, dtype = parse_shape_key(key)
    yield kernel, dtype, shape


def _group_jobs(spec: str) -> Iterator[Job]:
    from mla_var3.evidence.groups import get_group
    from mla_var3.evidence.model import parse_shape_key
    from mla_var3.kernel.registry import get_plan

    _, name, *rest = spec.split("/", 2)
    group = get_group(name)
    pattern = rest[0] if rest else "*"
    shapes = [s for s in group.shapes if fnmatch.fnmatchcase(s, pattern)]
    if not shapes:
        raise UserError(
            f"{spec}: no shape of group {name} matches {pattern!r} (its shapes: {', '.join(group.shapes)})"
        )
    for config in shapes:
        for member in group.members:
            if get_plan(member.kernel).backend != "cute":
                continue  # torch, libraries and cuTile cubins compile nothing here
            shape, dtype = parse_shape_key(group.member_config(member, config))
            yield member.kernel, dtype, shape


def _test_jobs(spec: str) -> Iterator[Job]:
    path_attr, _, rest = spec.partition("@")
    kernels, _, dtype = rest.partition("@")
    path, _, attr = path_attr.partition(":")
    if not (attr and kernels and dtype):
        raise UserError(f"{spec}: write tests/<file>.py:<ATTR>@<kernel>[,<kernel>]@<dtype>")
    file = REPO_ROOT / path
    if not file.is_file():
        raise UserError(f"{spec}: no test module {file}")
    sys.path.insert(0, str(file.parent))  # test modules import their neighbours by name
    module_spec = importlib.util.spec_from_file_location(file.stem, file)
    assert module_spec and module_spec.loader
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    shapes = getattr(module, attr, None)
    if shapes is None:
        raise UserError(f"{spec}: {path} has no {attr}")
    for kernel in kernels.split(","):
        for shape in shapes:
            yield kernel, dtype, dict(shape)


def jobs(specs: Sequence[str]) -> list[Job]:
    """Every (kernel, dtype, shape) the TARGETs name, in order, without repeats."""
    seen: dict[str, Job] = {}
    for spec in specs:
        if spec.startswith("groups/"):
            found = _group_jobs(spec)
        elif spec.startswith("tests/"):
            found = _test_jobs(spec)
        elif "/" in spec:
            found = _kernel_jobs(spec)
        else:
            raise UserError(
                f"{spec}: a target is <kernel>/<shape key>, groups/<group>[/<glob>] or tests/<file>.py:<ATTR>@<kernels>@<dtype>"
            )
        for kernel, dtype, shape in found:
            seen.setdefault(f"{kernel}|{dtype}|{sorted(shape.items())}", (kernel, dtype, shape))
    return list(seen.values())


def precompile(specs: Sequence[str], arch: str = "sm_90a") -> list[str]:
    """Compile every job into the compile cache (``$MLA_VAR3_CACHE_DIR``); one line per job."""
    from mla_var3.kernel.arch import Arch
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.registry import get_plan

    lines = []
    for kernel, dtype, shape in jobs(specs):
        plan = get_plan(kernel)(dtype)
        plan.check_shape(shape)
        result = compile_cached(plan, plan.default_config(), shape, Arch.parse(arch))
        lines.append(f"{result.source:8} {kernel} {dtype} {shape}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mla_var3.kernel.precompile", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--cache-dir", type=Path, required=True, help="the compile cache to fill (carried to the GPU)"
    )
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("targets", nargs="+", metavar="TARGET")
    args = parser.parse_args(argv)
    saved = {k: os.environ.get(k) for k in ("MLA_VAR3_CACHE_DIR", "CUTE_DSL_ARCH")}
    os.environ["MLA_VAR3_CACHE_DIR"] = str(args.cache_dir.resolve())
    os.environ.setdefault("CUTE_DSL_ARCH", args.arch)
    try:
        for line in precompile(args.targets, args.arch):
            print(line, flush=True)
    except UserError as exc:
        print(f"precompile: {exc}", file=sys.stderr)
        return 2
    finally:  # a caller in the same process (a test) keeps its own cache and arch
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
