"""MLA (multi-head latent attention) kernels in the CuTe DSL."""
