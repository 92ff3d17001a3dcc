"""Real PostgreSQL and Valkey servers from PyPI packages, for `jetspark up` and the tests."""
