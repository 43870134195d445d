"""Measuring layer: ncu, compute-sanitizer, NVTX/Kineto traces, in-kernel timelines, rooflines.

Every function returns plain results (dataclasses with ``to_dict()``); the evidence layer
files them. Import from the submodules (``mla_var3.profile.ncu``, ``.sanitizer``,
``.annotation``, ``.timeline``, ``.timeline_device``, ``.roofline``): this package re-exports
nothing, so a kernel that uses the timeline helpers has only those modules in its source
hash, and editing the ncu parser does not make its evidence stale. Importing the package
loads no GPU library.
"""
