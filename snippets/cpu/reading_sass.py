"""Reading SASS: how to get it, how a line reads, what each DSL construct becomes, two diagnoses.

The reading-SASS concept page runs these while it is built. ``scale`` is a one-line kernel compiled
with ``--keep-cubin`` and disassembled whole; the real kernels (``hopper_gemm_ws`` and the split
``mla_decode_v4`` for sm_90a, ``sm100_gemm_tcgen05`` for sm_100a) come through the registry and the
compile cache and are disassembled with ``mla_var3.analysis.sass``. ``construct_table`` counts, per
kernel, the SASS each DSL construct compiled to; ``wgmma_waits`` and ``elect_guards`` are the two
checks the pattern pages rely on (a wait ptxas added after every WGMMA; a ``WARPSYNC.ALL`` before a
TMA's ``ELECT``), run on the anti-pattern reproductions and on the real kernels.
"""

from __future__ import annotations

import re
import tempfile
from functools import cache
from pathlib import Path

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.analysis.sass import disassemble, histogram_of, opcode_histogram
from mla_var3.knowledge.expected import program_name_only
from snippets.cpu.get_started import run as run_cli

THREADS = 128


# --8<-- [start:scale]
@cute.kernel
def scale_kernel(x: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx < n:
        x[tidx] = x[tidx] * 2.0


@cute.jit
def scale(x: cute.Tensor, n: cutlass.Int32):
    scale_kernel(x, n).launch(grid=[1, 1, 1], block=[THREADS, 1, 1])
# --8<-- [end:scale]


# --8<-- [start:own]
def scale_sass() -> str:
    """The whole SASS of ``scale`` for sm_90a, from a cubin the DSL kept in memory."""
    x = make_fake_compact_tensor(cutlass.Float32, (THREADS,), assumed_align=16)
    with tempfile.TemporaryDirectory() as dump:  # --keep-cubin also writes the file into the dump dir
        compiled = cute.compile(scale, x, cutlass.Int32(THREADS),
                                options=f"--gpu-arch sm_90a --keep-cubin --dump-dir {dump}")  # fmt: skip
    cubin: bytes = compiled.artifacts.CUBIN
    return disassemble(cubin)  # nvdisasm -c; instruction_histogram(cubin) counts the mnemonics
# --8<-- [end:own]


@cache
def _scale_text() -> str:
    with program_name_only():
        return scale_sass()


_LINE_RE = re.compile(r"^\s*/\*(?P<address>[0-9a-f]{4,})\*/\s+(?P<body>.*?)\s*;?\s*$")
_PREDICATE_RE = re.compile(r"^(?P<predicate>@!?U?P(?:T|\d+))\s+")


def instructions(text: str) -> list[str]:
    """The instruction lines of a disassembly as ``/*addr*/ body``, padding ``NOP`` s after the end left out."""
    lines = []
    for line in text.splitlines():
        match = _LINE_RE.match(line)
        if match:
            lines.append(f"/*{match.group('address')}*/  {match.group('body').rstrip(' ;')} ;")
    while lines and lines[-1].endswith("NOP ;"):
        lines.pop()
    return lines


def scale_listing() -> str:
    """``scale``'s SASS as a text block."""
    return "```text\n" + "\n".join(instructions(_scale_text())) + "\n```"


def kept_files() -> list[str]:
    """The kinds of file ``--keep-cubin --keep-sass`` leaves in the dump folder (their suffixes)."""
    x = make_fake_compact_tensor(cutlass.Float32, (THREADS,), assumed_align=16)
    with tempfile.TemporaryDirectory() as dump, program_name_only():
        cute.compile(scale, x, cutlass.Int32(THREADS), options=f"--gpu-arch sm_90a --keep-cubin --keep-sass --dump-dir {dump}")
        return sorted("".join(Path(p).suffixes) for p in Path(dump).iterdir())


# ---------------------------------------------------------------- the command line
def cli_summary() -> str:
    """``python -m mla_var3.kernel hopper_gemm_ws --compile-only --arch sm_90a``, its compile-time line left out."""
    out = run_cli(["hopper_gemm_ws", "--compile-only", "--arch", "sm_90a"])
    kept = [line for line in out.splitlines() if not line.lstrip().startswith("compile:")]
    return "```console\n" + "\n".join(kept) + "\n```"


# ---------------------------------------------------------------- the real kernels
REAL_KERNELS = ("hopper_gemm_ws", "mla_decode_v4", "sm100_gemm_tcgen05")
_ARCHS = {"hopper_gemm_ws": "sm_90a", "mla_decode_v4": "sm_90a", "sm100_gemm_tcgen05": "sm_100a"}


@cache
def real_sass(name: str) -> str:
    """``nvdisasm`` of one of :data:`REAL_KERNELS` at its default config: the plan's default shape, except
    ``mla_decode_v4`` at 4 sequences of 1000 tokens, a shape it splits (so the cubin holds the PDL combine)."""
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.registry import get_plan
    from mla_var3.kernel.workloads.mla import mla_shape

    plan = get_plan(name)()
    shape = mla_shape(b=4, t=1000, page=64) if name == "mla_decode_v4" else plan.default_shape()
    with program_name_only():  # the DSL parses sys.argv (mkdocs's own arguments) when it compiles
        result = compile_cached(plan, plan.default_config(), shape, _ARCHS[name], need_function=False)
    return disassemble(result.compiled.cubin)


def parts(line: str) -> tuple[str, str, str, str, str]:
    """(address, predicate, opcode, modifiers, operands) of one instruction line."""
    match = _LINE_RE.match(line)
    if match is None:
        raise ValueError(f"not an nvdisasm instruction line: {line!r}")
    body = match.group("body").rstrip(" ;")
    predicate = _PREDICATE_RE.match(body)
    if predicate:
        body = body[predicate.end() :]
    mnemonic, _, operands = body.partition(" ")
    opcode, _, modifiers = mnemonic.partition(".")
    return match.group("address"), predicate.group("predicate") if predicate else "", opcode, modifiers, operands.strip()


ANATOMY = (  # (kernel, a regex the line must match): the first match is shown
    ("hopper_gemm_ws", r"@!P0 NANOSLEEP"),
    ("hopper_gemm_ws", r"HGMMA.*gsb0"),
    ("hopper_gemm_ws", r"UTMALDG\.2D\.MULTICAST"),
    ("hopper_gemm_ws", r"SYNCS\.EXCH\.64"),
    ("hopper_gemm_ws", r"USETMAXREG\.TRY_ALLOC"),
    ("hopper_gemm_ws", r"BAR\.SYNC\.DEFER_BLOCKING R\d+, 0x80"),
    ("sm100_gemm_tcgen05", r"UTCHMMA"),
)


def first_line(name: str, pattern: str) -> str:
    """The first instruction line of kernel ``name`` that matches ``pattern``."""
    regex = re.compile(pattern)
    return next(line for line in instructions(real_sass(name)) if regex.search(line))


def anatomy_table() -> str:
    """Lines of the real kernels cut into their parts."""
    rows = ["| kernel | address | predicate | opcode | modifiers | operands |", "|---|---|---|---|---|---|"]
    for name, pattern in ANATOMY:
        address, predicate, opcode, modifiers, operands = parts(first_line(name, pattern))
        cells = [f"`{c}`" if c else "" for c in (address, predicate, opcode, modifiers, operands)]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def opcode_table(name: str = "hopper_gemm_ws", top: int = 12) -> str:
    """The most frequent base opcodes of a real kernel (``opcode_histogram``), uniform ones marked."""
    ops = opcode_histogram(histogram_of(real_sass(name)))
    total = sum(ops.values())
    uniform = sum(n for op, n in ops.items() if op.startswith("U"))
    rows = ["| opcode | count | `U` opcode |", "|---|---|---|"]
    rows += [f"| `{op}` | {n} | {'yes' if op.startswith('U') else ''} |" for op, n in list(ops.items())[:top]]
    rows.append(f"| all {len(ops)} opcodes | {total} | {uniform} instructions with a `U` opcode |")
    return "\n".join(rows)


# ---------------------------------------------------------------- the construct map
# (DSL construct, SASS as shown, regex on the full mnemonic, or FENCE_PAIR: see fence_pairs)
FENCE_PAIR = "MEMBAR.ALL.CTA, FENCE.VIEW.ASYNC.S"
SM90_CONSTRUCTS = (
    ("cute.gemm, WGMMA atom", "HGMMA.64xNx16", r"^HGMMA\."),
    ("warpgroup.fence()", "WARPGROUP.ARRIVE", r"^WARPGROUP\.ARRIVE$"),
    ("warpgroup.wait_group(n)", "WARPGROUP.DEPBAR.LE gsb0, n", r"^WARPGROUP\.DEPBAR"),
    ("cute.copy, TMA load atom", "UTMALDG", r"^UTMALDG"),
    ("cute.copy, TMA store atom", "UTMASTG", r"^UTMASTG"),
    ("cpasync.prefetch_descriptor", "UTMACCTL.PF", r"^UTMACCTL"),
    ("elect_one() / inside a TMA cute.copy", "ELECT", r"^ELECT$"),
    ("mbarrier_init", "SYNCS.EXCH.64", r"^SYNCS\.EXCH\.64$"),
    ("mbarrier_arrive(_and_expect_tx)", "SYNCS.ARRIVE.TRANS64*", r"^SYNCS\.ARRIVE\.TRANS64"),
    ("mbarrier_wait / try_wait", "SYNCS.PHASECHK.TRANS64.TRYWAIT", r"^SYNCS\.PHASECHK\.TRANS64\.TRYWAIT$"),
    ("... its retry", "NANOSLEEP.SYNCS", r"^NANOSLEEP\.SYNCS$"),
    ("sync_threads / NamedBarrier.arrive_and_wait", "BAR.SYNC.DEFER_BLOCKING", r"^BAR\.SYNC"),
    ("NamedBarrier.arrive", "BAR.ARV", r"^BAR\.ARV$"),
    ("cluster_arrive / cluster_wait", "UCGABAR_ARV / UCGABAR_WAIT", r"^UCGABAR"),
    ("setmaxregister_decrease / _increase", "USETMAXREG", r"^USETMAXREG"),
    ("stmatrix (a StMatrix copy atom)", "STSM", r"^STSM"),
    ("fence_proxy('async.shared', space='cta')", "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S", FENCE_PAIR),
    ("griddepcontrol_wait", "ACQBULK", r"^ACQBULK$"),
    ("griddepcontrol_launch_dependents", "PREEXIT", r"^PREEXIT$"),
    ("a spill or a run-time-indexed array", "LDL / STL", r"^(LDL|STL)(\.|$)"),
)
SM100_CONSTRUCTS = (
    ("cute.gemm, tcgen05 atom", "UTCHMMA", r"^UTCHMMA"),
    ("tcgen05 commit to an mbarrier", "UTCBAR", r"^UTCBAR"),
    ("TMEM allocation", "UTCATOMSWS.FIND_AND_SET.ALIGN", r"^UTCATOMSWS\.FIND_AND_SET"),
    ("TMEM release", "UTCATOMSWS.AND", r"^UTCATOMSWS\.AND$"),
    ("TMEM -> registers copy", "LDTM.x<n>", r"^LDTM"),
    ("cute.copy, TMA load atom", "UTMALDG", r"^UTMALDG"),
    ("mbarrier_wait / try_wait", "SYNCS.PHASECHK.TRANS64.TRYWAIT", r"^SYNCS\.PHASECHK\.TRANS64\.TRYWAIT$"),
    ("warpgroup.fence / wait_group (no WGMMA on sm_100a)", "WARPGROUP.*", r"^WARPGROUP\."),
    ("cute.gemm, WGMMA atom (none on sm_100a)", "HGMMA", r"^HGMMA\."),
)


def construct_count(name: str, pattern: str) -> int:
    """How many instructions of kernel ``name`` have a mnemonic that matches ``pattern``."""
    if pattern == FENCE_PAIR:
        return fence_pairs(real_sass(name))
    regex = re.compile(pattern)
    return sum(n for mnemonic, n in histogram_of(real_sass(name)).items() if regex.match(mnemonic))


def construct_table(arch: str = "sm_90a") -> str:
    """DSL construct -> SASS -> its count in each real kernel of ``arch``."""
    names = [n for n in REAL_KERNELS if _ARCHS[n] == arch]
    constructs = SM90_CONSTRUCTS if arch == "sm_90a" else SM100_CONSTRUCTS
    rows = ["| DSL construct | SASS | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for dsl, sass, pattern in constructs:
        counts = " | ".join(str(construct_count(n, pattern)) for n in names)
        rows.append(f"| `{dsl}` | `{sass}` | {counts} |")
    return "\n".join(rows)


def fence_pairs(text: str) -> int:
    """``MEMBAR.ALL.CTA`` directly followed by ``FENCE.VIEW.ASYNC.S``: one ``fence_proxy`` each."""
    bodies = [parts(line)[2:4] for line in instructions(text)]
    return sum(a == ("MEMBAR", "ALL.CTA") and b == ("FENCE", "VIEW.ASYNC.S") for a, b in zip(bodies, bodies[1:], strict=False))


def excerpt(name: str, first: str, last: str, keep: tuple[str, ...] = ()) -> list[str]:
    """Kernel ``name``'s lines from the first match of ``first`` to the next match of ``last``; with
    ``keep``, only the lines whose opcode starts with one of ``keep``."""
    lines = instructions(real_sass(name))
    start = next(i for i, line in enumerate(lines) if re.search(first, line))
    end = next(i for i in range(start + 1, len(lines)) if re.search(last, lines[i]))
    window = lines[start : end + 1]
    return [line for line in window if not keep or parts(line)[2].startswith(keep)]


def text_block(lines: list[str], title: str = "") -> str:
    head = f'```text title="{title}"' if title else "```text"
    return head + "\n" + "\n".join(lines) + "\n```"


def wait_loop() -> str:
    """hopper_gemm_ws's first mbarrier wait, whole: try, sleep, try again, branch back."""
    return text_block(excerpt("hopper_gemm_ws", r"SYNCS\.PHASECHK\.TRANS64\.TRYWAIT", r"BRA"), "hopper_gemm_ws")


def producer_issue() -> str:
    """hopper_gemm_ws's producer from the ``ELECT`` to its first TMA load, whole."""
    return text_block(excerpt("hopper_gemm_ws", r"ELECT", r"UTMALDG"), "hopper_gemm_ws")


def consumer_mainloop() -> str:
    """hopper_gemm_ws's consumer from its first wait to the ``wait_group(0)``: the synchronization and MMAs."""
    keep = ("SYNCS", "NANOSLEEP", "WARPGROUP", "HGMMA", "USETMAXREG")
    return text_block(excerpt("hopper_gemm_ws", r"USETMAXREG\.TRY_ALLOC", r"WARPGROUP\.DEPBAR\.LE gsb0, 0x0", keep),
                      "hopper_gemm_ws")  # fmt: skip


def tcgen05_mainloop() -> str:
    """sm100_gemm_tcgen05 from the TMEM allocation to the first k-block's commit: its tcgen05 lines."""
    keep = ("UTCATOMSWS", "SYNCS", "ELECT", "UTMALDG", "UTCHMMA", "UTCBAR")
    return text_block(excerpt("sm100_gemm_tcgen05", r"UTCATOMSWS", r"UTCBAR", keep), "sm100_gemm_tcgen05")


# ---------------------------------------------------------------- diagnosis 1: WGMMA waits
_DEPTH_RE = re.compile(r"WARPGROUP\.DEPBAR\.LE gsb0, (0x[0-9a-f]+)")


def wait_depths(text: str) -> list[int]:
    """The ``n`` of every ``WARPGROUP.DEPBAR.LE gsb0, n`` (``wait_group(n)``), in program order."""
    return [int(m.group(1), 16) for line in text.splitlines() if (m := _DEPTH_RE.search(line))]


def hgmma_count(text: str) -> int:
    return sum(1 for line in instructions(text) if parts(line)[2] == "HGMMA")


@cache
def _back_edge(wait: str) -> tuple[str, str]:
    """The anti-pattern page's look-ahead loop (``wait`` = ``"next"`` or ``"same"``) compiled with
    ``remarks{ptx}``: its disassembly and what the compile printed."""
    from snippets.cpu.antipatterns.remarks import compile_with_remarks
    from snippets.cpu.antipatterns.wgmma_back_edge import launch

    out = make_fake_compact_tensor(cutlass.Float32, (128,), assumed_align=16)
    compiled, printed = compile_with_remarks(launch, out, cutlass.Int32(4), wait)
    return disassemble(compiled.artifacts.CUBIN), printed


def wgmma_waits() -> dict[str, tuple[int, list[int]]]:
    """Label -> (``HGMMA`` count, wait depths) for the real sm_90a kernels and the two look-ahead loops."""
    texts = {
        "hopper_gemm_ws": real_sass("hopper_gemm_ws"),
        "mla_decode_v4": real_sass("mla_decode_v4"),
        "look-ahead, wait in the next iteration": _back_edge("next")[0],
        "look-ahead, wait in the same iteration": _back_edge("same")[0],
    }
    return {label: (hgmma_count(text), wait_depths(text)) for label, text in texts.items()}


def wgmma_wait_table() -> str:
    rows = ["| kernel | `HGMMA` | `WARPGROUP.DEPBAR` | depths `n`, in program order |", "|---|---|---|---|"]
    for label, (hgmma, depths) in wgmma_waits().items():
        rows.append(f"| {label} | {hgmma} | {len(depths)} | {', '.join(map(str, depths))} |")
    return "\n".join(rows)


def serialized_excerpt() -> str:
    """The bad loop's WGMMAs and waits in program order: a wait after every ``HGMMA``."""
    keep = ("HGMMA", "WARPGROUP", "BRA")
    lines = [line for line in instructions(_back_edge("next")[0]) if parts(line)[2].startswith(keep)]
    return text_block(lines, "look-ahead, wait in the next iteration")


def back_edge_remarks() -> list[str]:
    """ptxas's numbered remarks for the bad loop (``remarks{ptx}``)."""
    from snippets.cpu.antipatterns.remarks import numbered_remarks

    return numbered_remarks(_back_edge("next")[1])


def remarks_block() -> str:
    """The bad loop's remarks as a text block."""
    return "```text\n" + "\n".join(back_edge_remarks()) + "\n```"


# ---------------------------------------------------------------- diagnosis 2: WARPSYNC before ELECT
def elect_guards(text: str) -> tuple[int, int]:
    """(``ELECT`` s, those directly after a ``WARPSYNC``) of a disassembly."""
    opcodes = [parts(line)[2] for line in instructions(text)]
    elects = [i for i, op in enumerate(opcodes) if op == "ELECT"]
    return len(elects), sum(i > 0 and opcodes[i - 1] == "WARPSYNC" for i in elects)


@cache
def _tma_one_thread(one_thread: bool) -> str:
    from snippets.cpu.antipatterns.tma_single_thread import compiled

    return disassemble(compiled(one_thread)[0].artifacts.CUBIN)


def elect_table() -> str:
    texts = {
        "TMA load under `if tidx == 0`": _tma_one_thread(True),
        "TMA load under `if warp == 0`": _tma_one_thread(False),
        **{name: real_sass(name) for name in REAL_KERNELS},
    }
    rows = ["| kernel | `ELECT` | directly after `WARPSYNC` |", "|---|---|---|"]
    rows += [f"| {label} | {e} | {w} |" for label, (e, w) in ((k, elect_guards(t)) for k, t in texts.items())]
    return "\n".join(rows)


def one_thread_excerpt() -> str:
    """The bad form from its test of the thread index (the last ``ISETP`` before the ``WARPSYNC``) to the
    TMA load, whole."""
    lines = instructions(_tma_one_thread(True))
    warpsync = next(i for i, line in enumerate(lines) if parts(line)[2] == "WARPSYNC")
    start = max(i for i in range(warpsync) if parts(lines[i])[2] == "ISETP")
    end = next(i for i in range(warpsync, len(lines)) if parts(lines[i])[2] == "UTMALDG")
    return text_block(lines[start : end + 1], "if tidx == 0")
