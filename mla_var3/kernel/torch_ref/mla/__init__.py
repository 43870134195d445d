"""MLA baselines run through PyTorch."""
