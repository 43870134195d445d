"""Absorbed-MLA decode for sm_90a, a worklog of variants (``v0``, ``v1``, ...) over shared building
blocks (``common``) and one plan base (``plan_common``); the workload is ``kernel/workloads/mla.py``."""
