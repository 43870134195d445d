"""Elementwise addition C = A + B."""
