"""Blackwell (sm_100a) GEMMs: tcgen05 MMA into Tensor Memory (compile-verified on our machines)."""
