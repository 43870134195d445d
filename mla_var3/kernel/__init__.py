"""The kernel lab: plans, backends, the registry and the CLI (``python -m mla_var3.kernel``)."""

from mla_var3.kernel.backends import Compiled, CuteKernel, CuTileKernel, Kernel, TorchKernel
from mla_var3.kernel.errors import UserError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors

__all__ = [
    "Compiled",
    "Config",
    "CuTileKernel",
    "CuteKernel",
    "Kernel",
    "KernelPlan",
    "Shape",
    "ShapeParam",
    "Tensors",
    "TorchKernel",
    "UserError",
]
