"""``python -m mla_var3.evidence {verify,profile,compare,export,import,gate,migrate}``.

Bad input (an unwritable archive path, a truncated archive, an unknown group...) prints one
line and exits 2. ``run-kernel``, ``check-member`` and ``time-group`` are the children that
``verify`` starts, one process each.

On the GPU machine (a copy of the tree without ``.git``)::

    MLA_VAR3_GIT_SHA=<commit> CUTLASS_DIR=<the carried CUTLASS examples> \
        timeout 3000 python -m mla_var3.evidence verify --archive evidence.tar.gz

re-verifies every stale record pages cite and every comparison group (``--only 'groups/*'``
for the groups alone, ``--only 'groups/gemm_bf16/*'`` for one) and packs the records it wrote
or found fresh; here, ``python -m mla_var3.evidence import evidence.tar.gz`` files them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from mla_var3.evidence.store import evidence_dir
from mla_var3.evidence.typed import EvidenceError
from mla_var3.kernel.errors import UserError
from mla_var3.project import REPO_ROOT


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mla_var3.evidence")
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify", help="re-verify stale evidence: what pages cite, and every comparison group")
    v.add_argument("--force", action="store_true", help="re-run everything, fresh or not")
    v.add_argument("--only", default=None, help="glob on <kernel>/<config> or groups/<group>/<config>")
    v.add_argument("--timeout", type=float, default=600.0, help="seconds per child process (its whole tree is killed)")
    v.add_argument("--docs", type=Path, default=REPO_ROOT / "docs")
    v.add_argument("--target", action="append", default=[], metavar="KERNEL/CONFIG", help="verify this too")
    v.add_argument("--check-jobs", type=int, default=1, help="a group's member checks run this many at once (timing is always alone)")
    v.add_argument("--archive", type=Path, default=None, help="then pack the records this run wrote or found fresh into this tar.gz")
    pr = sub.add_parser("profile", help="add ncu / sanitizer / annotation sections to run records")
    pr.add_argument("--prof-type", "--prof_type", dest="prof_type", choices=("ncu", "sanitize", "annotation"), required=True)
    pr.add_argument("--only", default=None, help="glob on <kernel>/<config>")
    pr.add_argument("--timeout", type=float, default=600.0)
    pr.add_argument("--kernel-regex", default=None,
                    help="ncu: measure the launch matching this regex instead of the plan's ncu_kernel_regex")
    pr.add_argument("--docs", type=Path, default=REPO_ROOT / "docs")
    c = sub.add_parser("compare", help="a comparison group's table (the workflow's columns) as Markdown")
    c.add_argument("group", help="a group declared in mla_var3/evidence/groups.py")
    c.add_argument("--config", required=True, help="shape key, e.g. m8192-n8192-k8192-bfloat16")
    e = sub.add_parser("export", help="pack every record into a tar.gz")
    e.add_argument("archive", type=Path)
    i = sub.add_parser("import", help="check and file records from a tar.gz (all or none)")
    i.add_argument("archive", type=Path)
    i.add_argument("--replace", action="store_true", help="overwrite newer records and drop sections the archive lacks")
    g = sub.add_parser("gate", help="fail on missing, failing, stale or compile-only evidence and unbacked claims")
    g.add_argument("--docs", type=Path, default=REPO_ROOT / "docs")
    sub.add_parser("migrate", help="upgrade schema-1 records (run records then show as stale) and schema-2 group records in place")
    rk = sub.add_parser("run-kernel", help=argparse.SUPPRESS)
    rk.add_argument("kernel")
    rk.add_argument("config")
    rk.add_argument("--mode", choices=("run", "compile"), required=True)
    rk.add_argument("--arch", required=True)
    rk.add_argument("--json", type=Path, required=True)
    cm = sub.add_parser("check-member", help=argparse.SUPPRESS)
    cm.add_argument("group")
    cm.add_argument("config")
    cm.add_argument("member")
    cm.add_argument("--json", type=Path, required=True)
    tg = sub.add_parser("time-group", help=argparse.SUPPRESS)
    tg.add_argument("group")
    tg.add_argument("config")
    tg.add_argument("--json", type=Path, required=True)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return _dispatch(args)
    except (EvidenceError, UserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace) -> int:  # noqa: C901 - one branch per command
    if args.cmd == "verify":
        from mla_var3.evidence.archive import check_writable, export
        from mla_var3.evidence.targets import Target, collect
        from mla_var3.evidence.verify import summary_table, verify

        if args.archive:
            check_writable(args.archive)
        targets = collect(args.docs)
        known = {(t.kernel, t.config) for t in targets if not t.group}
        for spec in args.target:
            kernel, _, config = spec.partition("/")
            if (kernel, config) not in known:
                targets.append(Target(kernel, config, ["--target"]))
        outcomes = verify(targets, force=args.force, only=args.only, timeout=args.timeout, check_jobs=args.check_jobs)
        print(summary_table(outcomes))
        if args.archive:
            records = [Path(o.path) for o in outcomes if o.path]
            print(f"packed {export(evidence_dir(), args.archive, records)} records into {args.archive}")
        return 1 if any(o.status == "failed" for o in outcomes) else 0
    if args.cmd == "profile":
        import fnmatch

        from mla_var3.evidence.targets import collect
        from mla_var3.evidence.verify import profile_one, summary_table

        if args.kernel_regex:
            from mla_var3.kernel.profiling import NCU_KERNEL_REGEX_ENV

            os.environ[NCU_KERNEL_REGEX_ENV] = args.kernel_regex  # the profiling child inherits it
        chosen = [t for t in collect(args.docs) if not t.group and (args.only is None or fnmatch.fnmatch(t.label, args.only))]
        outcomes = []
        for n, target in enumerate(chosen, 1):
            print(f"[{n}/{len(chosen)}] {args.prof_type} {target.label} ...", end=" ", flush=True)
            outcomes.append(profile_one(target, args.prof_type, args.timeout))
            print(f"{outcomes[-1].status} ({outcomes[-1].reason})", flush=True)
        print(summary_table(outcomes))
        return 1 if any(o.status == "failed" for o in outcomes) else 0
    if args.cmd == "compare":
        from mla_var3.evidence.compare import group_table

        print(group_table(args.group, args.config))
        return 0
    if args.cmd == "export":
        from mla_var3.evidence.archive import export

        print(f"packed {export(evidence_dir(), args.archive)} records into {args.archive}")
        return 0
    if args.cmd == "import":
        from mla_var3.evidence.archive import import_archive

        for path in import_archive(args.archive, replace=args.replace):
            print(f"filed {path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path}")
        return 0
    if args.cmd == "migrate":
        from mla_var3.evidence.migrate import migrate

        done = migrate()
        print(f"migrated {len(done)} record(s) to the current schema")
        return 0
    if args.cmd in ("run-kernel", "check-member", "time-group"):
        from mla_var3.evidence import verify as children

        if args.cmd == "run-kernel":
            text = json.dumps(children.run_kernel_child(args.kernel, args.config, args.mode, args.arch), default=str)
        elif args.cmd == "check-member":
            text = json.dumps(children.check_member_child(args.group, args.config, args.member), default=str)
        else:
            text = children.time_group_child(args.group, args.config)
        args.json.write_text(text, encoding="utf-8")
        return 0
    from mla_var3.evidence.gate import gate

    problems = gate(args.docs)
    for line in problems:
        print(f"blocked: {line}", file=sys.stderr)
    print("publish gate: " + (f"{len(problems)} problem(s)" if problems else "all cited evidence is fresh and verified"))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
