"""Kernels of the torch_ref backend, by <layer>/<family>/<variant>."""
