"""MLA decode baselines run through PyTorch."""
