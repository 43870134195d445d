"""``lint``: measurement-like numbers typed into prose (times, rates, clocks, power, percentages, ratios).

A number a page shows comes from a record through a directive, never from the author's keyboard.
What counts: a number with a unit of time (µs, ms, ns), throughput (GB/s, TB/s, TFLOP/s), clock
(MHz, GHz), power (W) or a percentage, and a ratio such as ``1.03×`` (the sign attached to the
number); not shapes (``128×256``, ``8192³``, ``2 × 1``, ``64 × N``). Outside prose (fenced blocks, code spans, directives, link targets, HTML tags)
nothing is checked. The escapes, each visible on the page:

- an ``estimate(...)`` directive: a CPU snippet computes the number at build time;
- a quoted line (``> ...``) carrying a ``cutlass:`` link: a quote of CUTLASS, cited;
- a line carrying a footnote reference (``[^h200]``) whose footnote text links its source
  (a datasheet fact, cited), and that footnote's own line;
- a bound (``≤ 3 %``, ``≥ 0.9×``, ``< 1 µs``): a rule or a target, not a measurement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

UNITS = r"µs|μs|us|ns|ms|GB/s|TB/s|GFLOP/s|TFLOP/s|PFLOP/s|TFLOPS|MHz|GHz|kW|W|%"
NUMBER = r"\d+(?:[.,]\d+)*"
MEASURE_RE = re.compile(rf"(?<![\w.,])(?P<number>{NUMBER})[ \u00a0\u202f]?(?P<unit>{UNITS})(?![\w/])")
# A ratio is a number with × (or x) attached and nothing attached after it: "1.03×", not "128×256" or "64 × N".
RATIO_RE = re.compile(r"(?<![\w.,×])(?P<number>\d+(?:\.\d+)?)[×x](?![\w×])")
BOUND_RE = re.compile(r"(?:≤|≥|<|>|<=|>=|&lt;|&gt;)[ \u00a0]*$")
FOOTNOTE_REF_RE = re.compile(r"\[\^(?P<label>[^\]\s]+)\](?!:)")
FOOTNOTE_DEF_RE = re.compile(r"^[ \t]{0,3}\[\^(?P<label>[^\]\s]+)\]:(?P<text>.*)$")
SOURCE_LINK_RE = re.compile(r"\]\((?:https?://|cutlass:)|<https?://|(?<![(<])https?://")
# What is not prose inside a prose line: link destinations, HTML tags, reference definitions' targets.
NOT_PROSE_RE = re.compile(r"\]\([^)]*\)|<[^>]+>|^[ \t]{0,3}\[[^\]^]+\]:.*$")


def typed_measurements(lines: Sequence[str], prose: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """``(line index, the number as typed)`` for each measurement-like number outside the escapes.

    ``prose`` is the page's prose lines with code spans and directives already blanked.
    """
    cited = _cited_footnotes(lines)
    found = []
    for index, line in prose:
        original = lines[index]
        if original.lstrip().startswith(">") and "cutlass:" in original:
            continue
        definition = FOOTNOTE_DEF_RE.match(original)
        if definition and definition.group("label") in cited:
            continue
        if any(m.group("label") in cited for m in FOOTNOTE_REF_RE.finditer(original)):
            continue
        text = NOT_PROSE_RE.sub(lambda m: " " * len(m.group(0)), line)
        for match in [*MEASURE_RE.finditer(text), *RATIO_RE.finditer(text)]:
            if not BOUND_RE.search(text[: match.start()]):
                found.append((index, match.group(0).strip()))
    return sorted(found)


def _cited_footnotes(lines: Sequence[str]) -> set[str]:
    """Footnote labels whose text links a source (a URL or a ``cutlass:`` link)."""
    return {m.group("label") for line in lines if (m := FOOTNOTE_DEF_RE.match(line)) and SOURCE_LINK_RE.search(m.group("text"))}
