"""Peers that are not ours (FlashMLA, NVIDIA TileGym): built or loaded from pinned upstream sources, never copied.

Build tooling per peer lives in ``external/<peer>/``; plans in ``external/<layer>/<family>/<variant>/``
like every other backend package.
"""
