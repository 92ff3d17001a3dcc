"""The database fixtures the table example runs against."""

from tests.jdbc.conftest import db, jdbc_database  # noqa: F401 - fixtures, used by name
