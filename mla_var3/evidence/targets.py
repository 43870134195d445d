"""What pages cite: ``evidence: [{kernel, config}]`` and ``[{group, config}]`` in front matter.

Front matter is read by the knowledge layer's one reader
(:func:`mla_var3.knowledge.frontmatter.parse_front_matter`, YAML only: verification runs on the
GPU machine, which has no pydantic); the site and the publish gate validate the same items
through the page model (:mod:`mla_var3.evidence.gate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mla_var3.knowledge.frontmatter import parse_front_matter


@dataclass
class Target:
    """One kernel (or, with ``group`` set, one comparison group) x config that pages cite."""

    kernel: str
    config: str
    pages: list[str] = field(default_factory=list)
    group: bool = False

    @property
    def label(self) -> str:
        return f"groups/{self.kernel}/{self.config}" if self.group else f"{self.kernel}/{self.config}"


def page_evidence(path: Path) -> list[Target]:
    """The items a page's front matter cites (malformed items are the site's to report, not verification's)."""
    front, _ = parse_front_matter(path.read_text(encoding="utf-8"), str(path))
    out = []
    for ref in (front.data or {}).get("evidence") or []:
        if isinstance(ref, dict) and "config" in ref and ("kernel" in ref) != ("group" in ref):
            out.append(Target(str(ref.get("kernel") or ref.get("group")), str(ref["config"]), group="group" in ref))
    return out


def collect(docs_dir: Path) -> list[Target]:
    """Every cited kernel x config and group x config, with the pages citing it, in a stable order."""
    found: dict[tuple[str, str, bool], Target] = {}
    for page in sorted(docs_dir.rglob("*.md")):
        for ref in page_evidence(page):
            target = found.setdefault((ref.kernel, ref.config, ref.group), ref)
            target.pages.append(str(page.relative_to(docs_dir)))
    return list(found.values())
