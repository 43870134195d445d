"""GEMM baselines run through PyTorch."""
