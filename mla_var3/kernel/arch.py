"""The arch rule: which compiled target may run on which GPU.

The CuTe DSL embeds SASS only (no PTX to JIT), so a plain target runs only within its major
version: ``sm_80`` code runs on 8.0, 8.6 and 8.9 but not on 9.0 (measured: an ``sm_80``
build of ``elementwise_add`` fails to load on the H200 with "The compiled function does not
have a valid execution engine"). An arch-specific target (``sm_90a``, ``sm_100a``,
``sm_103a``, ``sm_120a``) runs only on its exact compute capability; a family target
(``sm_100f``) runs on any 10.x. Kernels whose arch does not match the GPU are never
launched: they are compiled for their arch instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mla_var3.kernel.errors import ArchError

KNOWN_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_120a")
_ARCH_RE = re.compile(r"^sm_(\d+)(\d)([af]?)$")


@dataclass(frozen=True)
class Arch:
    """A compile target such as ``sm_90a``."""

    major: int
    minor: int
    suffix: str  # "", "a" (arch-specific) or "f" (family)

    @classmethod
    def parse(cls, name: str) -> Arch:
        m = _ARCH_RE.match(name.strip())
        if not m:
            raise ArchError(f"unknown arch {name!r}: use one of {', '.join(KNOWN_ARCHS)}")
        return cls(int(m.group(1)), int(m.group(2)), m.group(3))

    @property
    def name(self) -> str:
        return f"sm_{self.major}{self.minor}{self.suffix}"

    def runs_on(self, cc: tuple[int, int]) -> bool:
        """True when code compiled for this target can run on a GPU of compute capability ``cc``."""
        if self.suffix == "a":
            return cc == (self.major, self.minor)
        return cc[0] == self.major and cc[1] >= self.minor  # plain and family: same major


def cc_name(cc: tuple[int, int]) -> str:
    return f"sm_{cc[0]}{cc[1]}"


def check_supported(kernel: str, archs: tuple[str, ...], requested: str) -> Arch:
    """The requested arch, or one clear error when the kernel does not support it."""
    arch = Arch.parse(requested)
    if arch.name not in archs:
        raise ArchError(
            f"kernel {kernel!r} does not support {arch.name}; it supports {', '.join(archs)} "
            f"(pass --arch {archs[0]})"
        )
    return arch


def runnable_arch(archs: tuple[str, ...], cc: tuple[int, int]) -> Arch | None:
    """The first declared arch whose code runs on a GPU of compute capability ``cc``."""
    for name in archs:
        arch = Arch.parse(name)
        if arch.runs_on(cc):
            return arch
    return None
