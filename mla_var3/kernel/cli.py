"""``python -m mla_var3.kernel``: list, compile, check and time kernels.

    python -m mla_var3.kernel --list
    python -m mla_var3.kernel hopper_gemm_ws --m=4096 --n=4096 --k=4096 --check
    python -m mla_var3.kernel sm100_gemm_tcgen05 --compile-only --arch sm_100a

A kernel package's own ``__main__.py`` runs the same CLI for its plan:
``raise SystemExit(benchmark_kernel_argparse(PLAN))``.

Bad input (unknown kernel or flag, unsupported shape, dtype or arch, no GPU, a ``--json`` path
that cannot be written) prints one line and exits 2, before anything compiles.

Plans compile and run with ``sys.argv`` cut to the program name: every ``cute.compile`` parses the
host program's arguments for the DSL's ``-diagnostic`` option with argparse, which takes ``--h 16``
as an abbreviation of ``--help`` (prints the DSL's usage and exits 0 before compiling) and ``-d``
as one of ``-diagnostic``. The helper is the one the checked snippets use.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NoReturn

from mla_var3.kernel.errors import CorrectnessError, UserError
from mla_var3.kernel.plan import DTYPES, KernelPlan
from mla_var3.knowledge.expected import program_name_only
from mla_var3.profile.errors import ProfileError

PROF_TYPES = ("disabled", "annotation", "ncu", "sanitize")


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad flags on one line (``error: ...``), exit 2, like every user error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see --help)\n")


def _flag(parser: argparse.ArgumentParser, name: str, **kwargs: object) -> None:
    """Add ``--name`` accepting both ``-`` and ``_`` spellings."""
    spellings = dict.fromkeys([f"--{name}", f"--{name.replace('_', '-')}", f"--{name.replace('-', '_')}"])
    parser.add_argument(*spellings, dest=name.replace("-", "_"), **kwargs)


def global_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m mla_var3.kernel", add_help=False)
    _flag(p, "check", action="store_true", help="compare every output element with the reference")
    _flag(p, "prof_type", choices=PROF_TYPES, default="disabled", help="profiling mode")
    _flag(p, "compile_only", action="store_true", help="compile for the target arch only (no GPU needed)")
    _flag(p, "arch", default=None, help="target arch, e.g. sm_90a or sm_100a")
    _flag(p, "dtype", choices=DTYPES, default=None, help="element type (default: the kernel's first)")
    _flag(p, "json", default=None, metavar="PATH", help="write the result as JSON")
    _flag(p, "config", default=None, metavar="INDEX", type=int, help="index into the kernel's configs")
    _flag(p, "iters", type=int, default=200, help="timed launches (>= 100 for a record)")
    _flag(p, "no_bench", action="store_true", help="skip timing (with --check: correctness only)")
    return p


def plan_parser(plan: type[KernelPlan]) -> argparse.ArgumentParser:
    """Global flags plus the plan's shape flags (``None`` when not given: the default applies)."""
    p = _Parser(prog=f"python -m mla_var3.kernel {plan.name}", description=plan.description, parents=[global_parser()])
    for param in plan.shape_params:
        bounds = f">= {param.minimum}" + (f", <= {param.maximum}" if param.maximum is not None else "")
        _flag(p, param.name, type=int, default=None, help=f"{param.help} (default {param.default}; {bounds})")
    return p


def list_kernels() -> str:
    from mla_var3.kernel.registry import all_plans

    rows = [("name", "layer", "backend", "archs", "description")]
    rows += [(p.name, p.layer, p.backend, ",".join(p.archs), p.description) for p in all_plans().values()]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + r[4] for r in rows)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    if argv[0] == "--list":
        print(list_kernels())
        return 0
    try:
        from mla_var3.kernel.plan_index import find_plan  # imports that plan's module, not all of them

        plan_cls = find_plan(argv[0])
    except UserError as exc:
        return _fail(exc)
    return benchmark_kernel_argparse(plan_cls, argv[1:])


def _check_writable(path: str) -> None:
    """Fail now, not after the run, when the result could not be written to ``path``."""
    target = Path(path)
    if target.is_dir():
        raise UserError(f"--json {path} is a directory; pass a file path such as {target / 'result.json'}")
    existed = target.exists()
    try:
        target.open("a").close()
    except OSError as exc:
        raise UserError(f"--json {path} cannot be written ({exc.strerror}); pass a path in a writable folder") from None
    if not existed:
        target.unlink()


def benchmark_kernel_argparse(plan_cls: type[KernelPlan], argv: list[str] | None = None) -> int:
    """Parse the flags for one plan, run it, print the result; the exit code (the workflow's
    entry point, called by every kernel package's ``__main__.py``)."""
    from mla_var3.kernel.runner import RunRequest, run_plan

    argv = list(sys.argv[1:] if argv is None else argv)
    args = plan_parser(plan_cls).parse_args(argv)
    try:
        if args.arch is not None and not args.arch.strip():
            raise UserError("--arch is empty; pass a target such as --arch sm_90a (--list shows each kernel's archs)")
        if args.json:
            _check_writable(args.json)
        plan = plan_cls(args.dtype)
        configs = plan._autotune_configs()
        if args.config is not None and not 0 <= args.config < len(configs):
            raise UserError(f"--config {args.config} is out of range: {plan.name} has configs 0..{len(configs) - 1}")
        given = {p.name: getattr(args, p.name) for p in plan_cls.shape_params if getattr(args, p.name) is not None}
        shape = plan.default_shape() | given
        request = RunRequest(
            shape=shape,
            config=configs[args.config] if args.config is not None else None,
            arch=args.arch,
            compile_only=args.compile_only,
            check=args.check,
            bench=not args.no_bench,
            iters=args.iters,
        )
        # The DSL parses sys.argv on every compile (module docstring): it sees the program name only.
        with program_name_only():
            if args.prof_type != "disabled":
                from mla_var3.kernel.profiling import run_profiled

                result = run_profiled(plan, request, args.prof_type, argv, shape_given=bool(given))
            else:
                result = run_plan(plan, request)
    except (UserError, ProfileError) as exc:
        return _fail(exc)
    print(format_result(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=2, default=str) + "\n")
    if result.check is not None and not result.check["passed"]:
        print(f"error: {result.kernel} failed its correctness check", file=sys.stderr)
        return CorrectnessError.exit_code
    return 0


def _fail(exc: UserError | ProfileError) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return exc.exit_code


def format_result(r: object) -> str:
    """Human-readable lines for a RunResult."""
    d = r.to_dict()  # type: ignore[attr-defined]
    lines = [f"{d['kernel']} [{d['backend']}] {d['shape_key']} config {d['config_key']} -> {d['arch']} ({d['mode']}: {d['mode_reason']})"]
    c = d["compile"]
    lines.append(f"  compile: {c.get('source', '?')} in {c.get('seconds', 0):.3f}s" + (f" (cold compile {c['cold_s']:.3f}s)" if c.get("cold_s") else ""))
    a = d.get("analysis") or {}
    for k in a.get("resources", []):
        lines.append(
            f"  resources {k.get('kernel', '?')[:60]}: {k.get('registers')} regs/thread, static smem {k.get('static_smem_bytes')} B, "
            f"local {k.get('local_bytes')} B, stack {k.get('stack_bytes')} B"
        )
    if a.get("dynamic_smem_bytes") is not None:
        lines.append(f"  dynamic smem: {a['dynamic_smem_bytes']} B/block")
    if a.get("sass_classes"):
        lines.append("  SASS: " + ", ".join(f"{k} x{v}" for k, v in a["sass_classes"].items() if v))
    if d.get("check"):
        lines.append("  check: " + ("PASS" if d["check"]["passed"] else "FAIL") + " " + "; ".join(
            f"{o['name']}: rel_l2={o['rel_l2']:.2e} (tol {o['tolerance']:.0e}) max_abs={o['max_abs']:.2e}"
            + (f" nonfinite={o['nonfinite']}" if o["nonfinite"] else "")
            for o in d["check"]["outputs"]
        ))
    t, rf, ce = d.get("timing"), d.get("roofline"), d.get("ceilings")
    if t and rf:
        lines.append(f"  time: median {t['median_us']:.2f} us (p10 {t['p10_us']:.2f}, p90 {t['p90_us']:.2f}, n={t['n']}, {t['input_sets']} input sets)")
        shares = ", ".join(f"{pct:.1f}% of {name}" for name, pct in (rf.get("pct_of") or {}).items())
        lines.append(f"  {rf['flops_per_s'] / 1e12:.1f} TFLOP/s, {rf['bytes_per_s'] / 1e9:.0f} GB/s ({shares})")
    if ce:
        from mla_var3.profile.roofline import Ceiling

        lines.append("  ceilings measured in this run: " + ", ".join(Ceiling(**c).label() for c in ce))
    lines += _profile_lines(d.get("profile") or {})
    lines += [f"  note: {n}" for n in d.get("notes", [])]
    return "\n".join(lines)


def _profile_lines(profile: dict) -> list[str]:
    """One short block per --prof_type section: trace summary, ncu metrics, sanitizer verdicts."""
    lines = []
    ann = profile.get("annotation")
    if ann:
        lines.append(f"  trace: {ann['trace']}")
        for k in (ann.get("summary") or {}).get("kernels", [])[:5]:
            lines.append(f"    {k.get('name', '?')[:70]}: {k.get('launches')} launches, median {k.get('median_us', 0):.2f} us")
        for st in (ann.get("summary") or {}).get("streams", [])[:2]:
            lines.append(
                f"    stream {st.get('stream')}: {st.get('kernels')} kernels, busy {st.get('busy_us', 0):.1f} of "
                f"{st.get('span_us', 0):.1f} us, median gap {st.get('median_gap_us', 0):.2f} us"
            )
        tl = ann.get("timeline")
        if tl:
            from mla_var3.profile.timeline import Timeline

            fraction = Timeline(**tl).overlap.overlap_fraction
            during = f"; loads in flight during {100 * fraction:.1f} % of MMA time" if fraction is not None else ""
            lines.append(f"  timeline: {len(tl['spans'])} spans{during}")
    ncu = profile.get("ncu")
    if ncu:
        def f(key: str) -> str:
            return "-" if ncu.get(key) is None else f"{ncu[key]:.1f}"

        lines.append(
            f"  ncu: {f('duration_ns')} ns, SM {f('sm_throughput_pct')} %, TC {f('tc_pct')} %, DRAM {f('dram_throughput_pct')} %, "
            f"occupancy {f('achieved_occupancy_pct')} %, top stalls {ncu.get('top_stalls', [])[:3]}"
        )
    san = profile.get("sanitizer")
    if san:
        verdicts = ", ".join(f"{name} {'clean' if t['passed'] else 'FAILED'}" for name, t in san.get("tools", {}).items())
        lines.append(f"  compute-sanitizer: {verdicts}")
    return lines
