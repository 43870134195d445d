"""Render evidence records into page Markdown (tables, status badges, single values).

STUB: the evidence issue replaces the bodies; the signatures are the contract the MkDocs hook uses.
"""

from __future__ import annotations


def render_evidence_block(kernel: str, config: str) -> str:
    """A Markdown block: the evidence table for ``kernel`` at ``config`` with its status badge."""
    return f'!!! warning "Evidence missing"\n    No evidence record for `{kernel}` / `{config}` yet.\n'


def render_evidence_value(kernel: str, config: str, field: str) -> str:
    """One value from a record (e.g. ``timing.median_us``), formatted with its provenance."""
    return f"*(missing: {kernel}/{config}/{field})*"
