"""The one front-matter schema of knowledge pages, as pydantic models, and its validator.

pydantic does the type and value checks; :func:`validate_meta` turns each of its errors into a
:class:`~mla_var3.knowledge.errors.Problem` at the file line of the offending key (front matter
keeps every key's line). The closed tag list comes in as validation context.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from mla_var3.knowledge.errors import Problem
from mla_var3.knowledge.frontmatter import FrontMatter

Kind = Literal["optimization", "anti-pattern", "devlog", "study-note", "path", "concept"]
Scope = Literal["shared", "cute-dsl"]
Status = Literal["draft", "build-verified", "compile-verified", "run-verified"]
Arch = Literal["sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_120a"]
VerdictWord = Literal["confirms", "refines", "contradicts"]

KINDS: tuple[str, ...] = get_args(Kind)
SCOPES: tuple[str, ...] = get_args(Scope)
STATUSES: tuple[str, ...] = get_args(Status)
ARCHS: tuple[str, ...] = get_args(Arch)
VERDICTS: tuple[str, ...] = get_args(VerdictWord)
PATTERN_KINDS = ("optimization", "anti-pattern")
BUILD_VERIFIED = "build-verified"  # every claim backed by code the site build runs (CPU), none by a record

# `## ` sections each kind's template defines; a page must keep all of them (any order).
PATTERN_SECTIONS = (
    "When to Apply",
    "Mechanism",
    "Affected Metrics",
    "Implementation",
    "Source",
    "Performance Evidence",
    "Generalization",
    "Pitfalls",
    "Interactions",
)
REQUIRED_SECTIONS: dict[str, tuple[str, ...]] = {
    "optimization": PATTERN_SECTIONS,
    "anti-pattern": PATTERN_SECTIONS,
    "devlog": ("Overview", "Source", "Performance", "Patterns extracted", "Insights"),
    "study-note": ("Questions", "Host side", "Device side", "Pattern checklist", "Cross-reference verdicts"),
    "path": ("Progress",),
    "concept": (),  # one idea, free-form: executed snippets and links
}
KIND_KEYS = {"study-note": ("verdicts",), "path": ("steps",)}  # keys only pages of that kind may have

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LINES_RE = re.compile(r"^(\d+)(?:-(\d+))?$")

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


def _slug(value: str) -> str:
    if not ID_RE.match(value):
        raise ValueError(f"id {value!r} must be a lowercase slug (letters, digits, single hyphens)")
    return value


def _known_tag(value: str, info: ValidationInfo) -> str:
    tags = (info.context or {}).get("tags")
    if tags is not None and value not in tags:
        raise ValueError(f"unknown tag {value!r}; the closed list is in docs/knowledge/tags.yml")
    return value


def _line_span(value: Any) -> Any:
    """``"10-20"``, ``"57"`` or ``57`` -> ``(first, last)``."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return value
    match = LINES_RE.match(str(value).strip())
    first, last = (int(match.group(1)), int(match.group(2) or match.group(1))) if match else (0, -1)
    if not match or first < 1 or last < first:
        raise ValueError(f"lines {value!r} must be 'FIRST-LAST' or 'LINE' (1-based)")
    return (first, last)


Slug = Annotated[Text, AfterValidator(_slug)]
Tag = Annotated[str, AfterValidator(_known_tag)]
LineSpan = Annotated[tuple[int, int], BeforeValidator(_line_span)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceRef(_Model):
    """A CUTLASS file (repository-relative) and optional line span, at the pinned commit."""

    path: Text
    lines: LineSpan | None = None

    def label(self) -> str:
        if self.lines is None:
            return self.path
        first, last = self.lines
        return f"{self.path}:{first}" if first == last else f"{self.path}:{first}-{last}"


class EvidenceRef(_Model):
    """What a page shows: one record (``{kernel, config}``) or a comparison group's record (``{group, config}``)."""

    kernel: Text | None = None
    group: Text | None = None
    config: Text

    @model_validator(mode="after")
    def _one_subject(self) -> EvidenceRef:
        if (self.kernel is None) == (self.group is None):
            raise ValueError("an evidence item names either a 'kernel' or a 'group' (with its 'config'), not both")
        return self

    @property
    def subject(self) -> str:
        """The kernel or group name."""
        return self.kernel or self.group or ""

    def label(self) -> str:
        return f"{'kernel' if self.kernel else 'group'} {self.subject}, config {self.config}"


class Verdict(_Model):
    """A study note's judgement of an existing pattern."""

    pattern: Text
    verdict: VerdictWord
    note: Text


class Step(_Model):
    """One step of a learning path: a CUTLASS example and what it teaches."""

    example: Text
    goal: Text


class PageMeta(_Model):
    """A knowledge page's front matter, validated."""

    id: Slug
    title: Text
    kind: Kind
    scope: Scope
    arch: tuple[Arch, ...]
    tags: tuple[Tag, ...]
    status: Status
    related: tuple[Text, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    evidence: tuple[EvidenceRef, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    steps: tuple[Step, ...] = ()

    @property
    def is_pattern(self) -> bool:
        return self.kind in PATTERN_KINDS


LIST_KEYS = ("arch", "tags", "related", "sources", "evidence", "verdicts", "steps")  # an empty YAML value is an empty list


def validate_meta(fm: FrontMatter, display: str, tags: Collection[str]) -> tuple[PageMeta | None, list[Problem]]:
    """Check ``fm.data`` against the schema; returns the typed metadata (``None`` if unusable) and problems."""
    assert fm.data is not None
    data = {k: ([] if v is None and k in LIST_KEYS else v) for k, v in fm.data.items()}
    problems = []
    kind = data.get("kind")
    for key in list(data):
        owners = [k for k, keys in KIND_KEYS.items() if key in keys]
        if owners and kind not in owners:
            problems.append(Problem(display, fm.line_of(key), f"unknown front-matter key {key!r} (only {', '.join(owners)} pages have it)"))
            del data[key]
    try:
        meta = PageMeta.model_validate(data, context={"tags": set(tags)})
    except ValidationError as error:
        return None, problems + [_problem(e, fm, display) for e in error.errors(include_url=False)]
    return (None if problems else meta), problems


def _problem(error: Any, fm: FrontMatter, display: str) -> Problem:
    loc = tuple(error["loc"])
    kind, value = error["type"], error.get("input")
    name = _name(loc)
    if kind == "missing":
        parent = _name(loc[:-1])
        message = f"front matter lacks required key {loc[-1]!r}" if len(loc) == 1 else f"{parent} lacks {loc[-1]!r}"
        return Problem(display, fm.line_of(*loc[:-1]) if len(loc) > 1 else 1, message)
    if kind == "extra_forbidden":
        if len(loc) == 1:
            own = KIND_KEYS.get(str(fm.data.get("kind")), ())
            allowed = ", ".join(k for k in PageMeta.model_fields if k in own or not any(k in v for v in KIND_KEYS.values()))
            message = f"unknown front-matter key {loc[-1]!r}; allowed: {allowed}"
        else:
            message = f"{_name(loc[:-1])} has unknown key {loc[-1]!r} (allowed: {_allowed(loc[:-1])})"
        return Problem(display, fm.line_of(*loc), message)
    if kind == "literal_error":
        choices = ", ".join(re.findall(r"'([^']*)'", error["ctx"]["expected"]))
        message = f"{name} {value!r} is not one of: {choices}"
    elif kind in ("string_type", "string_too_short"):
        message = f"{name} must be a non-empty string, got {value!r}"
    elif kind in ("tuple_type", "list_type"):
        message = f"{name} must be a YAML list, got {value!r}"
    elif kind in ("model_type", "dict_type", "model_attributes_type"):
        message = f"{name} must be a mapping, got {value!r}"
    elif kind == "value_error":  # our validators' messages name the value
        message = error["msg"].removeprefix("Value error, ")
    else:
        message = f"{name}: {error['msg']} (got {value!r})"
    return Problem(display, fm.line_of(*loc), message)


def _allowed(loc: tuple[str | int, ...]) -> str:
    """The keys of the model at ``loc`` (such as ``("sources", 0)``)."""
    model: type[BaseModel] = PageMeta
    for part in loc:
        if isinstance(part, str):
            annotation = model.model_fields[part].annotation
            model = next(a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel))
    return ", ".join(model.model_fields)


def _name(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))
