"""torch baselines for the reduction layer: RMSNorm and row reductions."""
