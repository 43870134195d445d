"""CUTLASS's programmatic dependent launch tutorial (``dsl_tutorials/programmatic_dependent_launch.py``), imported from ``CUTLASS_DIR``."""
