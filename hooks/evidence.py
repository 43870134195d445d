"""Which evidence renderer fills which directive: the site's one link from pages to the evidence layer.

The ``knowledge`` plugin runs this file (``mkdocs.yml``: ``knowledge: evidence: hooks/evidence.py``)
and calls :func:`evidence_hooks`; the knowledge layer itself never imports ``mla_var3.evidence``.
"""

from __future__ import annotations

from mla_var3.evidence import render
from mla_var3.knowledge import EvidenceHooks


def evidence_hooks() -> EvidenceHooks:
    return EvidenceHooks(
        block=render.render_evidence_block,
        value=render.render_evidence_value,
        roofline=render.render_roofline,
        speedup=render.render_speedup,
        compare=render.render_comparison,
    )
