"""cuBLAS through ``torch.matmul``: the rate our GEMMs are measured against."""
