"""Markdown tables from header and rows, through one Jinja2 template; cells are escaped for table syntax.

The evidence layer may use :func:`markdown_table` too, so every table on the site is laid out one way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from jinja2 import Environment, StrictUndefined

UNESCAPED_PIPE_RE = re.compile(r"(?<!\\)\|")

_ENV = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
_ENV.filters["cell"] = lambda value: UNESCAPED_PIPE_RE.sub(r"\\|", " ".join(str(value).split()))
_TABLE = _ENV.from_string(
    "| {{ header | map('cell') | join(' | ') }} |\n"
    "|{% for _ in header %}---|{% endfor %}\n"
    "{% for row in rows %}| {{ row | map('cell') | join(' | ') }} |\n{% endfor %}"
)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """The table's lines; a ``|`` in a cell is escaped, line breaks in a cell become spaces."""
    rows = list(rows)
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a table row has {len(row)} cells for {len(header)} columns: {row!r}")
    return _TABLE.render(header=header, rows=rows).splitlines()
