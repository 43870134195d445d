"""Attention kernels (FMHA) in the CuTe DSL, and the adapter that imported CUTLASS attention examples share."""
