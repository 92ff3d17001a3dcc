"""Job metrics: the names (one module) and the shape workers report them in."""
