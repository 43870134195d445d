"""User-facing errors of the kernel lab.

A :class:`UserError` is bad input (unknown kernel, shape a kernel cannot take, arch mismatch,
missing driver, missing CUTLASS checkout). The CLI prints its message on one line and exits
non-zero with no traceback. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input: the message names the thing and the fix."""

    exit_code = 2


class UnknownKernelError(UserError):
    """No registered kernel has this name."""


class UnsupportedShapeError(UserError):
    """The kernel cannot take this shape (alignment, divisibility, limits)."""


class UnsupportedDtypeError(UserError):
    """The kernel does not implement this dtype."""


class ArchError(UserError):
    """The kernel does not support the requested arch, or the GPU does not match."""


class NoGpuError(UserError):
    """A run was requested but no CUDA driver or GPU is available."""


class CutlassDirError(UserError):
    """A plan that loads a CUTLASS example cannot find it under CUTLASS_DIR."""


class CorrectnessError(Exception):
    """A kernel's output disagrees with its reference beyond tolerance."""

    exit_code = 1
