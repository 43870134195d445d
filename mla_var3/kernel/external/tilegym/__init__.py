"""NVIDIA TileGym's cuTile MLA decode: its pinned source, fetched into the cuTile store and imported unchanged."""
