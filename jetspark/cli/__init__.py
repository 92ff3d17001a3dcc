"""The ``jetspark`` console script: servers (up, api, worker, migrate) and an HTTP client."""
