"""Errors of the measuring layer.

:class:`ProfileError` means a profiling tool could not give a result (not installed, timed
out, printed nothing we can read) or its input was malformed (an allow-list entry without a
reason). Its message names the thing and the fix; the CLI prints it on one line. A kernel
that the tool *measured* as faulty is not an error here: it is a result that did not pass.
"""

from __future__ import annotations


class ProfileError(Exception):
    """A profiling tool gave no usable result, or its input is malformed."""

    exit_code = 2
