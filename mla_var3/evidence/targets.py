"""What pages cite: ``evidence: [{kernel, config}]`` in front matter, and config keys parsed back to shapes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from mla_var3.evidence.schema import EvidenceError
from mla_var3.kernel.plan import DTYPES

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_DIM = re.compile(r"^([a-z_]+?)(\d+)$")


@dataclass
class Target:
    """One kernel x config that at least one page cites."""

    kernel: str
    config: str
    pages: list[str] = field(default_factory=list)


def parse_config(config: str) -> tuple[dict[str, int], str]:
    """``m8192-n8192-k8192-bfloat16`` -> ({m: 8192, n: 8192, k: 8192}, "bfloat16")."""
    head, _, dtype = config.rpartition("-")
    if dtype not in DTYPES or not head:
        raise EvidenceError(f"config {config!r} must look like 'm8192-n8192-bfloat16' (dims, then a dtype of {DTYPES})")
    shape: dict[str, int] = {}
    for part in head.split("-"):
        m = _DIM.match(part)
        if not m:
            raise EvidenceError(f"config {config!r}: {part!r} is not <name><integer>")
        shape[m.group(1)] = int(m.group(2))
    return shape, dtype


def page_meta(path: Path) -> dict:
    """A page's front matter (empty without one)."""
    m = _FRONT_MATTER.match(path.read_text())
    return (yaml.safe_load(m.group(1)) or {}) if m else {}


def page_evidence(path: Path) -> list[tuple[str, str]]:
    """The (kernel, config) pairs a page's front matter cites."""
    refs = page_meta(path).get("evidence") or []
    return [(str(r["kernel"]), str(r["config"])) for r in refs if isinstance(r, dict) and "kernel" in r and "config" in r]


def collect(docs_dir: Path) -> list[Target]:
    """Every cited kernel x config, with the pages citing it, in a stable order."""
    found: dict[tuple[str, str], Target] = {}
    for page in sorted(docs_dir.rglob("*.md")):
        for kernel, config in page_evidence(page):
            target = found.setdefault((kernel, config), Target(kernel, config))
            target.pages.append(str(page.relative_to(docs_dir)))
    return list(found.values())
