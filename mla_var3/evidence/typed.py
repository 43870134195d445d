"""JSON <-> dataclasses, checked field by field: the one reader and writer of evidence records.

Stdlib only (the GPU machine has no pydantic). :func:`parse` builds a dataclass from decoded
JSON following its type hints -- ``str``, ``int``, ``float``, ``bool``, ``X | None``,
``list[X]``, ``tuple[X, ...]``, ``tuple[X, Y]``, ``dict[str, X]``, ``Literal[...]``, nested
dataclasses, ``Any`` -- and refuses anything else with one line naming the record and the
field path (``timing.median_us: expected a number, got str``). Unknown keys are refused too,
except derived ones a class writes for readers (:data:`DERIVED`), which are recomputed, not
read. :func:`dump` is the inverse and adds the derived values.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, Literal, TypeVar

T = TypeVar("T")

# class -> properties written by dump() for readers of the JSON and ignored by parse().
DERIVED: dict[type, tuple[str, ...]] = {}


class EvidenceError(Exception):
    """A malformed, misplaced, stale-by-construction or unknown record; the message names the file and the fix."""


def derived(*names: str) -> Callable[[type[T]], type[T]]:
    """Class decorator: ``names`` are properties dump() writes and parse() skips."""

    def mark(cls: type[T]) -> type[T]:
        DERIVED[cls] = names
        return cls

    return mark


def _derived_of(cls: type) -> tuple[str, ...]:
    return tuple(name for klass in cls.__mro__ for name in DERIVED.get(klass, ()))


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _describe(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def parse(cls: type[T], data: Any, where: str, path: str = "") -> T:
    """``cls`` built from ``data``; :class:`EvidenceError` ``"<where>: <path>: <problem>"`` otherwise."""
    return _convert(cls, data, where, path)


def _fail(where: str, path: str, problem: str) -> EvidenceError:
    return EvidenceError(f"{where}: {path or 'record'}: {problem}")


def _convert(tp: Any, value: Any, where: str, path: str) -> Any:  # noqa: C901 - one branch per kind of type
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            if len(options) < len(typing.get_args(tp)):
                return None
            raise _fail(where, path, "must not be null")
        if len(options) == 1:
            return _convert(options[0], value, where, path)
        for option in options:
            try:
                return _convert(option, value, where, path)
            except EvidenceError:
                continue
        raise _fail(where, path, f"{_describe(value)} fits none of {', '.join(map(_type_name, options))}")
    if origin is Literal:
        if value not in typing.get_args(tp):
            raise _fail(where, path, f"{value!r} is not one of {', '.join(map(repr, typing.get_args(tp)))}")
        return value
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, where, path)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(where, path, f"expected a number, got {_describe(value)}")
        return float(value)
    if tp in (int, str, bool):
        if type(value) is not tp:
            raise _fail(where, path, f"expected {_type_name(tp)}, got {_describe(value)}")
        return value
    if origin is list:
        (item,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise _fail(where, path, f"expected a list, got {_describe(value)}")
        return [_convert(item, v, where, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list | tuple):
            raise _fail(where, path, f"expected a list, got {_describe(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, where, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise _fail(where, path, f"expected {len(args)} items, got {len(value)}")
        return tuple(_convert(a, v, where, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True)))
    if origin is dict:
        key_type, item = typing.get_args(tp)
        if not isinstance(value, dict):
            raise _fail(where, path, f"expected an object, got {_describe(value)}")
        for key in value:
            if not isinstance(key, str):
                raise _fail(where, path, f"key {key!r} is not a string")
        return {k: _convert(item, v, where, f"{path}.{k}" if path else k) for k, v in value.items()}
    raise TypeError(f"typed.parse cannot read type {tp!r}")  # a model bug, not bad input


def _type_name(tp: Any) -> str:
    return {float: "a number", int: "an integer", str: "a string", bool: "true/false"}.get(tp, getattr(tp, "__name__", str(tp)))


def _build(cls: type, value: Any, where: str, path: str) -> Any:
    if not isinstance(value, dict):
        raise _fail(where, path, f"expected an object, got {_describe(value)}")
    hints = _hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = set(value) - set(known) - set(_derived_of(cls))
    if unknown:
        raise _fail(where, path, f"unknown field(s) {', '.join(sorted(unknown))}")
    kwargs = {}
    for name, f in known.items():
        sub = f"{path}.{name}" if path else name
        if name not in value:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise _fail(where, sub, "missing")
            continue
        kwargs[name] = _convert(hints[name], value[name], where, sub)
    try:
        obj = cls(**kwargs)
    except Exception as exc:  # a __post_init__ check, possibly another layer's (e.g. ProfileError)
        raise _fail(where, path, str(exc)) from None
    check = getattr(obj, "check", None)
    if callable(check):
        problem = check()
        if problem:
            raise _fail(where, path, problem)
    return obj


def dump(obj: Any) -> Any:
    """Plain JSON data of a model object (dataclasses with their derived properties)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {f.name: dump(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        out.update({name: dump(getattr(obj, name)) for name in _derived_of(type(obj))})
        return out
    if isinstance(obj, list | tuple):
        return [dump(v) for v in obj]
    if isinstance(obj, dict):
        return {k: dump(v) for k, v in obj.items()}
    return obj


# Significant digits a float keeps in a record: CUDA event times resolve about half a
# microsecond, NVML samples a watt or a megahertz, so 7 digits lose nothing measured and halve
# the size of a group record's per-round times (records travel to the GPU machine in a 64 MiB tree).
FLOAT_DIGITS = 7


def dumps(data: Any) -> str:
    """Indented JSON with short lists (of numbers, strings, rows) kept on one line, floats to
    :data:`FLOAT_DIGITS` significant digits; ends with a newline."""
    return _dumps(data, 0) + "\n"


def _dumps(value: Any, indent: int) -> str:
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {_dumps(v, indent + 2)}" for k, v in sorted(value.items())]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value and any(isinstance(v, dict) or (isinstance(v, list) and v) for v in value):
        return "[\n" + ",\n".join(inner + _dumps(v, indent + 2) for v in value) + f"\n{pad}]"
    if isinstance(value, list):
        return "[" + ", ".join(_dumps(v, indent) for v in value) + "]"
    if isinstance(value, float) and math.isfinite(value):
        return json.dumps(float(f"{value:.{FLOAT_DIGITS}g}"))
    return json.dumps(value, ensure_ascii=False, allow_nan=True)
