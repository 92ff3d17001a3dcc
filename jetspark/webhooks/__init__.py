"""Job status webhooks: target rules (``targets``), signatures (``signing``), the outbox in
PostgreSQL (``outbox``) and one POST (``delivery``); the API process runs the deliverer."""
