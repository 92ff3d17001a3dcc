"""Alembic migrations of the jetspark schema (``jetspark migrate``)."""
