"""GEMM kernels (compute-bound; the cuBLAS roofline) and the workload they share (``common``)."""
