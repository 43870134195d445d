"""Programmatic dependent launch between two kernels of ours: a row scale and the row dot that reads it."""
