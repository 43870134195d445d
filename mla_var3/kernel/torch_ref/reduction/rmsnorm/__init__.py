"""torch's RMSNorm, the baseline of the ``rmsnorm_bf16`` group."""
