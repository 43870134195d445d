"""``python -m mla_var3.evidence {verify,export,import,gate,show}``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mla_var3.evidence.schema import EvidenceError
from mla_var3.evidence.store import ROOT, evidence_dir


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mla_var3.evidence")
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify", help="re-verify stale evidence that pages cite")
    v.add_argument("--force", action="store_true", help="re-run everything, fresh or not")
    v.add_argument("--only", default=None, help="glob on <kernel>/<config>")
    v.add_argument("--timeout", type=float, default=600.0, help="seconds per kernel")
    v.add_argument("--docs", type=Path, default=ROOT / "docs")
    v.add_argument("--target", action="append", default=[], metavar="KERNEL/CONFIG", help="verify this too")
    v.add_argument("--archive", type=Path, default=None, help="also pack the written records into this tar.gz")
    pr = sub.add_parser("profile", help="add ncu / sanitizer / annotation sections to run records")
    pr.add_argument("--prof-type", "--prof_type", dest="prof_type", choices=("ncu", "sanitize", "annotation"), required=True)
    pr.add_argument("--only", default=None, help="glob on <kernel>/<config>")
    pr.add_argument("--timeout", type=float, default=600.0)
    pr.add_argument("--docs", type=Path, default=ROOT / "docs")
    c = sub.add_parser("compare", help="the workflow's comparison table from records, as Markdown")
    c.add_argument("kernels", nargs="+", help="kernels; the first is the baseline")
    c.add_argument("--config", required=True, help="shape key, e.g. m8192-n8192-k8192-bfloat16")
    c.add_argument("--device", default=None, help="device slug, e.g. nvidia-h200")
    e = sub.add_parser("export", help="pack records into a tar.gz")
    e.add_argument("archive", type=Path)
    i = sub.add_parser("import", help="check and file records from a tar.gz")
    i.add_argument("archive", type=Path)
    g = sub.add_parser("gate", help="fail on missing, failing, stale or compile-only evidence")
    g.add_argument("--docs", type=Path, default=ROOT / "docs")
    args = p.parse_args(argv)
    try:
        return _dispatch(args)
    except EvidenceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace) -> int:
    if args.cmd == "verify":
        from mla_var3.evidence.archive import export
        from mla_var3.evidence.targets import Target, collect
        from mla_var3.evidence.verify import summary_table, verify

        targets = collect(args.docs)
        known = {(t.kernel, t.config) for t in targets}
        for spec in args.target:
            kernel, _, config = spec.partition("/")
            if (kernel, config) not in known:
                targets.append(Target(kernel, config, ["--target"]))
        outcomes = verify(targets, force=args.force, only=args.only, timeout=args.timeout)
        print(summary_table(outcomes))
        if args.archive:
            print(f"packed {export(evidence_dir(), args.archive)} records into {args.archive}")
        return 1 if any(o.status == "failed" for o in outcomes) else 0
    if args.cmd == "profile":
        import fnmatch

        from mla_var3.evidence.targets import collect
        from mla_var3.evidence.verify import profile_one, summary_table

        chosen = [t for t in collect(args.docs) if args.only is None or fnmatch.fnmatch(f"{t.kernel}/{t.config}", args.only)]
        outcomes = []
        for i, target in enumerate(chosen, 1):
            print(f"[{i}/{len(chosen)}] {args.prof_type} {target.kernel} {target.config} ...", end=" ", flush=True)
            outcomes.append(profile_one(target, args.prof_type, args.timeout))
            print(f"{outcomes[-1].status} ({outcomes[-1].reason})", flush=True)
        print(summary_table(outcomes))
        return 1 if any(o.status == "failed" for o in outcomes) else 0
    if args.cmd == "compare":
        from mla_var3.evidence.compare import comparison_table

        print(comparison_table(args.kernels, args.config, args.device))
        return 0
    if args.cmd == "export":
        from mla_var3.evidence.archive import export

        print(f"packed {export(evidence_dir(), args.archive)} records into {args.archive}")
        return 0
    if args.cmd == "import":
        from mla_var3.evidence.archive import import_archive

        for path in import_archive(args.archive):
            print(f"filed {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
        return 0
    from mla_var3.evidence.gate import gate

    problems = gate(args.docs)
    for line in problems:
        print(f"blocked: {line}", file=sys.stderr)
    print("publish gate: " + (f"{len(problems)} problem(s)" if problems else "all cited evidence is fresh and verified"))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
