"""Reduction kernels: row reductions and norms (RMSNorm), including cluster (distributed-SMEM) reductions."""
