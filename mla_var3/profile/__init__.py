"""Measuring layer: ncu, compute-sanitizer, NVTX/Kineto traces, in-kernel timelines, rooflines.

Every function returns plain results (dataclasses with ``to_dict()``); the evidence layer
files them. Importing this package loads no GPU library: torch, matplotlib and the CuTe DSL
are imported inside the functions that need them (the DSL device helpers live in
:mod:`mla_var3.profile.timeline_device`).
"""
