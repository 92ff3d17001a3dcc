"""Example Python processors; this package is the default allowed module (DagLimits).

- ``words.Tokenizer``: line → words, flat-map style (resumes where the outbox refused).
- ``words.Accumulator``: counts (or sums) by key and emits in ``complete()``, a stage of a
  two-stage word count.
- ``enrich.LookupEnricher``: two inbound edges; the lookup table (lower priority number) is
  received in full before the stream it enriches.
- ``sources.Numbers``: a source-role processor (no inbound edges).
- ``diagnostics``: ``PartitionProbe`` and ``FailOn``, to check a deployment's wiring.
- ``streaming``: ``RunningCount`` (state kept in snapshots across epochs), ``PassThrough``
  (forwards and checks watermarks), ``FixedWatermark`` (emits a watermark that does not
  increase, failing its job), ``InstanceCount`` (counts the instances a processor has been
  created as, across epochs).
"""
