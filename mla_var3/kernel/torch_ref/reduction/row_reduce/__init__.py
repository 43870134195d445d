"""torch's row sum and max, the reference of the ``row_reduce`` group."""
