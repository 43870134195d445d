"""``KernelPlan``: the study workflow's API for one kernel (inputs, reference, configs, roofline, plan).

A plan describes a workload; ``plan(config)`` returns the backend object that compiles and
launches it (:class:`~mla_var3.kernel.backends.CuteKernel`, ``TorchKernel`` or a
``CuTileKernel``). The CLI (``python -m mla_var3.kernel``) and each kernel package's own
``__main__.py`` drive a plan through :meth:`KernelPlan.benchmark_kernel_argparse`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from mla_var3.kernel.errors import UnsupportedDtypeError

if TYPE_CHECKING:
    import torch

    from mla_var3.kernel.backends import Kernel

Shape = dict[str, int]
Config = dict[str, Any]
Tensors = dict[str, "torch.Tensor"]

LAYERS = ("elementwise", "reduction", "gemm", "attention", "mla", "launch")
DTYPES = ("float16", "bfloat16", "float32", "float8_e4m3fn")
# rel-L2 tolerance per output dtype (DESIGN.md); tighten in a plan where the math allows.
REL_L2_TOLERANCE = {"float32": 1e-5, "tf32": 1e-3, "float16": 1e-2, "bfloat16": 1e-2, "float8_e4m3fn": 5e-2}


@dataclass(frozen=True)
class ShapeParam:
    """One shape flag a plan declares (``--m``, ``--b``, ...)."""

    name: str
    default: int
    help: str


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
    # Shapes that `--check` and verification run by default (besides the CLI's one).
    check_shapes: ClassVar[tuple[Shape, ...]] = ()
    backend: ClassVar[str] = "cute"

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

    def validate_shape(self, shape: Shape) -> None:  # noqa: B027 - optional hook
        """Raise :class:`UnsupportedShapeError` naming the dimension and the fix."""

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

    def benchmark_kernel_argparse(self, argv: list[str] | None = None) -> int:
        """Parse the CLI flags for this plan, run it, return the exit code."""
        from mla_var3.kernel.cli import main_for_plan

        return main_for_plan(type(self), argv)
