"""Dao-AILab's quack (``quack-kernels`` on PyPI), loaded from the installed package, never copied.

The GPU machine has no package index: carry the wheels (``build/quack/``, about 5 MB) with
``bash tools/device/carry.sh --with build/quack/quack_kernels-0.6.5-py3-none-any.whl --with
build/quack/apache_tvm_ffi-0.1.15.post2-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl
--with build/quack/torch_c_dlpack_ext-0.1.5-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl
--with build/quack/einops-0.8.2-py3-none-any.whl`` (fetched for Python 3.12 with ``pip download
--no-deps --only-binary=:all: --python-version 3.12 ...``; quack also imports ``triton``, which the
GPU machine's torch image has).
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
