"""FP8 (e4m3) GEMMs on sm_90a with per-tensor scales: the workload (``workload``) and our Hopper kernel."""
