"""The ``jetspark`` console script: servers (up, api, worker, migrate) and the client commands
(submit, jobs, status, ... on the SDK's ``Client``)."""
