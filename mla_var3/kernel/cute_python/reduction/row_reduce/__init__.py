"""Row reductions (sum and max over the last dim, fp32 out), and the reduction library of this layer
(:mod:`.reduce`): warp, SMEM and cluster (distributed-SMEM) levels."""
