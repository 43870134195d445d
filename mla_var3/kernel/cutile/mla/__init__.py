"""MLA kernels written in cuTile."""
