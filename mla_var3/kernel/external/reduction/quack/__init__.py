"""Dao-AILab's quack (``quack-kernels`` on PyPI), loaded from the installed package, never copied.

The GPU machine has no package index: carry the three wheels in ``build/quack/`` (about 5 MB) with
``bash tools/device/carry.sh $(for w in build/quack/*.whl; do echo --with $w; done)``: quack-kernels
0.6.5, apache-tvm-ffi 0.1.15.post2 and torch-c-dlpack-ext 0.1.5, fetched for the GPU machine's
Python 3.12 with ``pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation
cp --platform manylinux_2_28_x86_64 quack-kernels==0.6.5 apache-tvm-ffi==0.1.15.post2
torch-c-dlpack-ext`` (quack's einops dependency serves only its MLP module, not RMSNorm). quack also
imports ``triton``, which the GPU machine's torch image has and the CPU machine lacks.
"""

from __future__ import annotations

QUACK_VERSION = "0.6.5"


def unavailable_reason() -> str | None:
    """Why quack cannot run here (one line), or ``None``."""
    try:
        import quack
        import quack.rmsnorm  # noqa: F401  (imports triton, tvm_ffi and the CuTe DSL)
    except ImportError as exc:
        return f"quack-kernels {QUACK_VERSION} is not importable ({exc}); carry build/quack/*.whl (see this package's docstring)"
    if quack.__version__ != QUACK_VERSION:
        return f"quack-kernels {quack.__version__} is installed; the peer is pinned to {QUACK_VERSION}"
    return None


__all__ = ["QUACK_VERSION", "unavailable_reason"]
