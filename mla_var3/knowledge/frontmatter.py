"""Split a page into YAML front matter and body, keeping the file line of every key for error messages.

This is the one reader of front matter in the project: the schema (:mod:`.schema`), the site build,
``lint``, verification and the publish gate all take a page's metadata from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from mla_var3.knowledge.errors import Problem

# The rule MkDocs uses to strip front matter (mkdocs.utils.meta.YAML_RE), so body lines agree with what it renders.
FRONT_MATTER_RE = re.compile(r"\A-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.DOTALL)
OPENING_RE = re.compile(r"\A-{3}[ \t]*\n")

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class FrontMatter:
    """A page's parsed front matter (``None`` when it has none), its body and where the body starts."""

    data: dict[str, Any] | None
    body: str
    body_line: int  # file line (1-based) of the body's first line
    key_lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, *path: str | int) -> int:
        return line_of(self.key_lines, *path)


def line_of(key_lines: dict[KeyPath, int], *path: str | int) -> int:
    """The file line of a key (or list item); falls back to the closest enclosing key, then line 1."""
    while path:
        if path in key_lines:
            return key_lines[path]
        path = path[:-1]
    return 1


def parse_front_matter(text: str, display: str) -> tuple[FrontMatter, list[Problem]]:
    """Parse ``text``'s front matter; YAML errors, duplicate keys and an unclosed block become problems naming the line."""
    match = FRONT_MATTER_RE.match(text)
    if not match:
        if OPENING_RE.match(text):
            return FrontMatter(None, text, 1), [
                Problem(display, 1, "the front matter opened here has no closing '---' line; add one after the last key")
            ]
        return FrontMatter(None, text, 1), []
    yaml_text = match.group(1)
    rest = text[match.end() :]
    body = rest.lstrip("\n")  # as MkDocs strips it, so line numbers agree with what it renders
    body_line = text[: match.end()].count("\n") + 1 + len(rest) - len(body)
    try:
        node = yaml.compose(yaml_text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(yaml_text)
    except yaml.MarkedYAMLError as error:
        return FrontMatter(None, body, body_line), [_yaml_problem(error, display)]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return FrontMatter(None, body, body_line), [Problem(display, 2, "front matter must be a YAML mapping")]
    problems: list[Problem] = []
    key_lines: dict[KeyPath, int] = {}
    _record_lines(node, (), key_lines, problems, display)
    return FrontMatter(data, body, body_line, key_lines), problems


def _yaml_problem(error: yaml.MarkedYAMLError, display: str) -> Problem:
    """Name the line where the broken construct starts (an unclosed quote or bracket), not where YAML gave up."""
    # File line = YAML line (0-based) + 1 for 1-based + 1 for the opening '---'.
    start = error.context_mark.line + 2 if error.context_mark else None
    found = error.problem_mark.line + 2 if error.problem_mark else None
    reason = error.problem or str(error)
    if start is not None and error.context:
        noticed = f" (noticed at line {found})" if found is not None and found != start else ""
        return Problem(display, start, f"malformed YAML front matter: {error.context}: {reason}{noticed}")
    return Problem(display, found or 1, f"malformed YAML front matter: {reason}")


def _record_lines(
    node: yaml.Node, path: KeyPath, out: dict[KeyPath, int], problems: list[Problem], display: str
) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 2  # +1 for 1-based, +1 for the opening '---'
            if key in seen:
                problems.append(Problem(display, line, f"duplicate front-matter key {key!r}"))
            seen.add(key)
            out[(*path, key)] = line
            _record_lines(value_node, (*path, key), out, problems, display)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            out[(*path, index)] = item.start_mark.line + 2
            _record_lines(item, (*path, index), out, problems, display)
