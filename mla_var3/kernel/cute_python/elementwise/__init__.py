"""Elementwise kernels (memory-bound; the copy-bandwidth roofline)."""
