"""Our FMHA forward for SM90 (d = 128, fp16/bf16, O and LSE): variants v0-v3 and what they share."""
