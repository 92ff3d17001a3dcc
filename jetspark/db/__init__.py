"""PostgreSQL storage: SQLAlchemy 2 tables and the engine/session factory."""
