"""Kernels of the cutile backend, by <layer>/<family>/<variant>."""
