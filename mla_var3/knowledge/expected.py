"""Checked snippets: a program whose real output or error a page shows, and what it must do to stay true.

A page never paraphrases an error message or an output from memory. The snippet declares, next to its
code, what running it must produce; the page runs it at build time through :func:`show` and shows what
really happened. When the DSL changes and the error disappears (or the output no longer says what the
page's prose says), :func:`show` raises :class:`ExpectationError` and the strict build stops, naming the
page and the block::

    # snippets/cpu/control_flow_errors.py
    from cutlass.base_dsl.common import DSLUserCodeError
    from mla_var3.knowledge.expected import expect

    @expect(raises=DSLUserCodeError, message="UNSUP_EARLY_EXIT")
    def break_in_a_device_loop() -> None:
        ...  # compile a kernel whose `for i in range(n)` has a `break`

    # the page
    ```python exec="on"
    from mla_var3.knowledge.expected import show
    print(show("snippets.cpu.control_flow_errors:break_in_a_device_loop"))
    ```

Fragments match across line wraps (runs of whitespace compare equal). ``@expect(prints="...")`` declares a program that must finish and print (on stdout or stderr, from Python
or from C, such as the DSL's host-side ``cute.printf``) text containing that fragment. The function runs
with ``sys.argv`` reduced to the program name (the CuTe DSL parses the host program's arguments) and
with ANSI colours and the repository's path removed from what is shown.
"""

from __future__ import annotations

import ctypes
import importlib
import io
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from mla_var3.project import REPO_ROOT

ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
ATTRIBUTE = "__expect__"

F = TypeVar("F", bound=Callable[[], Any])


class ExpectationError(RuntimeError):
    """A checked snippet no longer does what it declares (the page that shows it is out of date)."""


@dataclass(frozen=True)
class Expectation:
    """What running a snippet must produce: an exception of type ``raises`` whose text contains
    ``message``, or (``raises`` is ``None``) a normal return with ``prints`` in its output."""

    raises: type[BaseException] | None
    message: str
    prints: str


@dataclass(frozen=True)
class Outcome:
    """What a run produced: its output (stdout and stderr, cleaned) and the exception it raised, if any."""

    target: str
    output: str
    error: BaseException | None

    @property
    def error_text(self) -> str:
        return clean(str(self.error)) if self.error is not None else ""


def expect(*, raises: type[BaseException] | None = None, message: str = "", prints: str = "") -> Callable[[F], F]:
    """Declare what the decorated zero-argument function must do when a page runs it."""
    if raises is None and message:
        raise TypeError("expect(message=...) checks an error's text: give raises= too (or use prints=)")
    if raises is not None and not message:
        raise TypeError("expect(raises=...) needs message=, a fragment the error's text must contain")
    if raises is None and not prints:
        raise TypeError("expect() needs raises= and message=, or prints=")

    def mark(fn: F) -> F:
        setattr(fn, ATTRIBUTE, Expectation(raises, message, prints))
        return fn

    return mark


def clean(text: str) -> str:
    """``text`` without ANSI colour codes and with repository paths made relative."""
    return ANSI_RE.sub("", text).replace(f"{REPO_ROOT}{os.sep}", "")


def resolve(target: str) -> tuple[Callable[[], Any], Expectation]:
    """``"package.module:function"`` -> the function and its declared expectation."""
    module_name, _, name = target.partition(":")
    if not module_name or not name:
        raise ExpectationError(f"{target!r}: name a checked snippet as 'package.module:function'")
    fn = getattr(importlib.import_module(module_name), name, None)
    if not callable(fn):
        raise ExpectationError(f"{target!r}: {module_name} has no function {name!r}")
    expectation = getattr(fn, ATTRIBUTE, None)
    if not isinstance(expectation, Expectation):
        raise ExpectationError(f"{target!r}: declare what it must do with @expect(raises=..., message=...) or @expect(prints=...)")
    return fn, expectation


def run(target: str) -> Outcome:
    """Run the checked snippet ``target`` and check it against its declaration (:class:`ExpectationError` if not met)."""
    fn, expectation = resolve(target)
    error: BaseException | None = None
    with _captured() as output, program_name_only():
        try:
            fn()
        except Exception as exc:  # the outcome a page shows, checked below
            error = exc
    outcome = Outcome(target, clean(output.getvalue()).strip("\n"), error)
    _check(outcome, expectation)
    return outcome


def show(target: str, *, title: str | None = None) -> str:
    """Markdown for a page: a text block with what running ``target`` printed and raised, checked first."""
    outcome = run(target)
    shown = outcome.output
    if outcome.error is not None:
        shown = "\n".join(filter(None, [shown, f"{type(outcome.error).__name__}: {outcome.error_text.strip()}"]))
    label = title or (f"raises {type(outcome.error).__name__} (run when this page was built)" if outcome.error
                      else "output (run when this page was built)")  # fmt: skip
    fence = "````" if "```" in shown else "```"
    return f'{fence}text title="{label}"\n{shown}\n{fence}\n'


def _check(outcome: Outcome, expectation: Expectation) -> None:
    where = f"checked snippet {outcome.target}"
    fix = "update the snippet's @expect and the page that shows it"
    if expectation.raises is not None:
        wanted = f"{expectation.raises.__name__} containing {expectation.message!r}"
        if outcome.error is None:
            raise ExpectationError(f"{where} no longer raises {wanted}: it ran to the end; {fix}")
        if not isinstance(outcome.error, expectation.raises) or not _contains(outcome.error_text, expectation.message):
            got = f"{type(outcome.error).__name__}: {outcome.error_text.strip()[:300]}"
            raise ExpectationError(f"{where} should raise {wanted} but raised {got}; {fix}")
        return
    if outcome.error is not None:
        raise ExpectationError(f"{where} should run and print {expectation.prints!r} but raised "
                               f"{type(outcome.error).__name__}: {outcome.error_text.strip()[:300]}; {fix}")  # fmt: skip
    if not _contains(outcome.output, expectation.prints):
        raise ExpectationError(f"{where} should print {expectation.prints!r}; it printed {outcome.output[-300:]!r}; {fix}")


def _contains(text: str, fragment: str) -> bool:
    """``fragment`` in ``text``, any run of whitespace matching any other (messages wrap at a width)."""
    return " ".join(fragment.split()) in " ".join(text.split())


@contextmanager
def program_name_only() -> Iterator[None]:
    """Run with ``sys.argv`` reduced to the program name (the CuTe DSL parses the host program's arguments:
    ``mkdocs build -d DIR`` would make a compile exit)."""
    argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        yield
    finally:
        sys.argv = argv


@contextmanager
def _captured() -> Iterator[io.StringIO]:
    """Everything written to stdout and stderr inside, by Python or by C code (file descriptors 1 and 2).
    Python's writes land at once; C's stdio buffer is flushed at the end, so its lines may come later."""
    text = io.StringIO()
    libc = ctypes.CDLL(None)
    with tempfile.TemporaryFile() as sink:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        libc.fflush(None)
        saved = [os.dup(1), os.dup(2)]
        python_streams = sys.stdout, sys.stderr
        writer = io.TextIOWrapper(os.fdopen(os.dup(sink.fileno()), "wb", buffering=0), encoding="utf-8", write_through=True)
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            sys.stdout = sys.stderr = writer
            yield text
        finally:
            libc.fflush(None)
            sys.stdout, sys.stderr = python_streams
            writer.close()
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            sink.seek(0)
            text.write(sink.read().decode("utf-8", errors="replace"))
