"""Database tables as sources and sinks: operator-named JDBC connections (``connections``)."""
