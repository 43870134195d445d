"""MLA peers: FlashMLA's SM90 decode and NVIDIA TileGym's cuTile decode."""
