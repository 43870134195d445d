"""NVIDIA TileGym (NVIDIA/TileGym) cuTile MLA kernels."""
