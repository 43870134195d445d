"""``KernelPlan``: the study workflow's API for one kernel (inputs, reference, configs, roofline, plan).

A plan describes a workload; ``plan(config)`` returns the backend object that compiles and
launches it (:class:`~mla_var3.kernel.backends.CuteKernel`, ``TorchKernel`` or a
``CuTileKernel``). The CLI (``python -m mla_var3.kernel``) and each kernel package's own
``__main__.py`` (``benchmark_kernel_argparse(PLAN)`` from :mod:`mla_var3.kernel.cli`) drive a
plan; this module never imports the CLI.

What a new plan declares (the registry checks the first group when it registers the plan):

- ``name`` (snake_case, unique), ``layer`` (one of :data:`LAYERS`), ``description``,
  ``archs`` (compile targets), ``shape_params`` (:class:`ShapeParam`, each with its bounds);
  the six methods of the workflow's API below.
- Optional, with defaults: ``dtypes``, ``check_shapes``, ``backend``,
  ``static_shape_params`` (which shape params the binary is specialised on: the compile
  cache keys on those only), ``data_distribution``, ``ncu_kernel_regex``,
  :meth:`~KernelPlan.validate_shape` (rules beyond per-param bounds),
  :meth:`~KernelPlan.record_timeline`, :meth:`~KernelPlan.unavailable_reason`,
  :meth:`~KernelPlan.source_files`, :meth:`~KernelPlan.upstream_example`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from mla_var3.kernel.errors import UnsupportedDtypeError, UnsupportedShapeError

if TYPE_CHECKING:
    import torch

    from mla_var3.kernel.backends import Kernel
    from mla_var3.profile.timeline import Timeline

Shape = dict[str, int]
Config = dict[str, Any]
Tensors = dict[str, "torch.Tensor"]

LAYERS = ("elementwise", "reduction", "gemm", "attention", "mla", "launch", "memory")
DTYPES = ("float16", "bfloat16", "float32", "float8_e4m3fn")
# rel-L2 tolerance per output dtype (docs/contributing/evidence-model.md); tighten in a plan where the math allows.
REL_L2_TOLERANCE = {"float32": 1e-5, "tf32": 1e-3, "float16": 1e-2, "bfloat16": 1e-2, "float8_e4m3fn": 5e-2}
# What the runner draws inputs from unless a plan says otherwise (docs/contributing/evidence-model.md: never zeros or small integers).
DATA_DISTRIBUTION = "standard normal (torch.randn in fp32, cast to the dtype)"
# The CuTe DSL names every kernel it emits ``kernel_cutlass_<...>``: what ncu should profile.
CUTE_DSL_KERNEL_REGEX = "kernel_cutlass_"


@dataclass(frozen=True)
class ShapeParam:
    """One shape flag a plan declares (``--m``, ``--b``, ...) and the values it accepts.

    ``minimum``/``maximum`` are inclusive bounds, checked for every plan the same way by
    :meth:`KernelPlan.check_shape` before anything compiles; ``maximum`` ``None`` is unbounded.
    """

    name: str
    default: int
    help: str
    minimum: int = 0
    maximum: int | None = None

    def check(self, value: int, kernel: str) -> None:
        """Raise :class:`UnsupportedShapeError` naming the flag, the bound and the value."""
        if value < self.minimum:
            raise UnsupportedShapeError(f"{kernel} needs --{self.name} >= {self.minimum}, got {value}")
        if self.maximum is not None and value > self.maximum:
            raise UnsupportedShapeError(f"{kernel} needs --{self.name} <= {self.maximum}, got {value}")


def config_slug(config: Config) -> str:
    """A stable, path-safe name for a config: ``tile=128x256-stages=4``."""
    parts = []
    for key in sorted(config):
        value = config[key]
        if isinstance(value, tuple | list):
            value = "x".join(str(v) for v in value)
        parts.append(f"{key}={value}")
    return "-".join(parts) or "default"


def shape_slug(shape: Shape, dtype: str) -> str:
    """The evidence key of a shape and dtype: ``m8192-n8192-k8192-bfloat16``."""
    return "-".join(f"{k}{v}" for k, v in shape.items()) + f"-{dtype}"


class KernelPlan(ABC):
    """A workload with a reference, configs, a roofline and a backend kernel per config."""

    name: ClassVar[str]
    layer: ClassVar[str]
    description: ClassVar[str]
    archs: ClassVar[tuple[str, ...]]
    dtypes: ClassVar[tuple[str, ...]] = ("bfloat16",)
    shape_params: ClassVar[tuple[ShapeParam, ...]]
    # Shapes that `--check` and verification run by default (besides the CLI's one); the first
    # is what `--prof_type=sanitize` runs when no shape flag is given.
    check_shapes: ClassVar[tuple[Shape, ...]] = ()
    backend: ClassVar[str] = "cute"
    # The shape params the compiled binary is specialised on; the others are dynamic (one
    # binary serves every value), so the compile cache keys on these only. None: all of them.
    static_shape_params: ClassVar[tuple[str, ...] | None] = None
    # How prepare_inputs fills the inputs (the record names it).
    data_distribution: ClassVar[str] = DATA_DISTRIBUTION
    # Which kernels of one launch ncu measures (a regex on kernel names).
    ncu_kernel_regex: ClassVar[str] = CUTE_DSL_KERNEL_REGEX

    def __init__(self, dtype: str | None = None) -> None:
        dtype = dtype or self.dtypes[0]
        if dtype not in self.dtypes:
            raise UnsupportedDtypeError(
                f"kernel {self.name!r} does not implement dtype {dtype!r}; it supports "
                f"{', '.join(self.dtypes)} (pass --dtype {self.dtypes[0]})"
            )
        self.dtype = dtype

    # --- shapes -------------------------------------------------------------------------
    def default_shape(self) -> Shape:
        return {p.name: p.default for p in self.shape_params}

    def check_shape(self, shape: Shape) -> None:
        """Every declared param present and within its bounds, then the plan's own rules."""
        for param in self.shape_params:
            if param.name not in shape:
                raise UnsupportedShapeError(f"{self.name} needs --{param.name} (shape {shape} lacks it)")
            param.check(shape[param.name], self.name)
        self.validate_shape(shape)

    def validate_shape(self, shape: Shape) -> None:  # noqa: B027 - optional hook
        """Rules beyond per-param bounds (alignment, divisibility): raise
        :class:`UnsupportedShapeError` naming the dimension and the fix."""

    def static_shape(self, shape: Shape) -> Shape:
        """The part of ``shape`` the compiled binary depends on (see ``static_shape_params``)."""
        if self.static_shape_params is None:
            return dict(shape)
        return {k: v for k, v in shape.items() if k in self.static_shape_params}

    # --- the workflow's API -------------------------------------------------------------
    @abstractmethod
    def prepare_inputs(self, shape: Shape) -> Tensors:
        """Fresh normally distributed inputs on the current CUDA device."""

    @abstractmethod
    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        """Output buffers (the runner poisons them with NaN before every checked launch)."""

    @abstractmethod
    def reference_fn(self, inputs: Tensors) -> Tensors:
        """The outputs in higher precision (PyTorch), keyed like ``allocate_outputs``."""

    @abstractmethod
    def _autotune_configs(self) -> list[Config]:
        """Candidate configs; the first is the default."""

    @abstractmethod
    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        """The minimum FLOPs and DRAM bytes of the workload, for the roofline."""

    @abstractmethod
    def plan(self, config: Config) -> Kernel:
        """The backend kernel for ``config``."""

    # --- helpers ------------------------------------------------------------------------
    def default_config(self) -> Config:
        return self._autotune_configs()[0]

    def tolerance(self) -> float:
        return REL_L2_TOLERANCE[self.dtype]

    @classmethod
    def source_files(cls) -> tuple[Path, ...]:
        """The files that define this plan (its package); the fingerprint adds their imports."""
        return (Path(inspect.getfile(cls)).resolve(),)

    @classmethod
    def upstream_example(cls) -> str | None:
        """The CUTLASS example path (relative to the repo root) an imported plan loads, if any."""
        return None

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this plan cannot run on this machine (a peer library not built, ...), or ``None``."""
        return None

    def record_timeline(self, shape: Shape, config: Config) -> Timeline | None:
        """The in-kernel timeline of one launch on this GPU (``--prof_type=annotation`` asks);
        ``None``: this kernel records none."""
        return None
