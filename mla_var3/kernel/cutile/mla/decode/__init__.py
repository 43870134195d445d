"""Absorbed-MLA decode in cuTile."""
