"""Launch-level patterns: programmatic dependent launch and other overlap between kernels."""
