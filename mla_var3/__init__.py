"""learn-cute-dsl's kernel package: CuTe DSL kernels, their checks, evidence and pages.

Layers (import downward only): ``evidence`` -> ``kernel`` -> ``profile``, ``analysis``;
``knowledge`` sits beside them (page schema only).
"""

__version__ = "0.1.0"
