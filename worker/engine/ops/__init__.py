"""The translation table's ops, one module per family: ``sources``, ``transforms``,
``aggregation``, ``event_time``, ``sinks``, ``python``; ``base`` is what every op is and
``table`` maps each processor kind to its op. Ops never import the walkers that call them
(``execution``, ``epoch_loop``)."""
