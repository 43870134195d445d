"""CUTLASS's Ampere FlashAttention-2 (``cute/ampere/kernel/attention/flash_attention_v2.py``), imported as a plan."""
