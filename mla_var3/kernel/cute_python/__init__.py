"""Kernels of the cute_python backend, by <layer>/<family>/<variant>."""
