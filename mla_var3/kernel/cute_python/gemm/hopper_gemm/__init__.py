"""Hopper (sm_90a) GEMMs: TMA, mbarrier pipelines and WGMMA."""
