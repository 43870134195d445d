"""The RMSNorm devlog's build-time tables (``snippets/cpu/rmsnorm_anatomy.py``) say what the page's prose
relies on: one 256-thread CTA holds a 16384-column row in registers in step 0, step 2 splits it over
a cluster of two, and torch's composite for a bf16 x with an fp32 weight moves 44 bytes per element."""

from __future__ import annotations

from snippets.cpu.rmsnorm_anatomy import tilings_table, torch_passes


def test_tilings_follow_the_plans() -> None:
    rows = {tuple(c.strip(" `") for c in line.split("|")[1:3]): line for line in tilings_table().splitlines()}
    assert "| 256 | 1 | 1 | 8 | 32 KiB |" in rows[("16384", "rmsnorm_v0")]
    assert "| 256 | 1 | 2 | 4 | 16 KiB |" in rows[("16384", "rmsnorm_v2")]
    assert "| 512 | 1 | 1 | 4 | 32 KiB |" in rows[("16384", "rmsnorm_v1")]
    assert "| 128 | 1 | 1 | 4 | 8 KiB |" in rows[("4096", "rmsnorm_v0")]


def test_torch_composite_passes() -> None:
    text = torch_passes()
    assert "| `_to_copy` | 2 | 4 |" in text and "| `copy_` | 2 | 2 |" in text
    assert "7 of them over the whole (M, N) tensor: 44 bytes per element against 4" in text
