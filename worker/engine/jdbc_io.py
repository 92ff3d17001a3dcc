"""Spark's JDBC data source for ``source.jdbc`` and ``sink.jdbc``, and the few statements the
driver runs itself (a sink's commit).

No SQL text comes from a DAG: a table is a checked identifier (``schema.table``) quoted by the
database's own Spark dialect, a ``where`` is a Column built from the checked expression tree
(``worker.engine.expressions``), pushed down by Spark where it can. The only statements run
here are this module's constants around such quoted names.

Credentials live in the connection's options only: every error that leaves this module is
an ``EngineError`` naming the vertex, with the connection's password, user and URL replaced.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import structlog
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.expressions import IDENTIFIER, quote_identifier
from jetspark.jdbc.connections import Connection, JdbcConfigError
from worker.engine.errors import EngineError

log = structlog.get_logger("jetspark.engine")

MARKERS = "jetspark_jdbc_epochs"
"""The table, in the sink table's schema, whose rows say which epochs a sink committed."""

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """A vertex's connection and table, as Spark and the driver use them."""

    vertex: str
    kind: str
    connection: Connection
    table: str
    """``table`` or ``schema.table``, each part checked (``processors.TableName``)."""

    @property
    def parts(self) -> list[str]:
        return self.table.split(".")

    def options(self) -> dict[str, str]:
        try:
            return self.connection.spark_options()
        except JdbcConfigError as error:
            raise EngineError(f"{self.kind}: {error}") from None

    def refused(self, error: BaseException, doing: str) -> EngineError:
        """``error`` as the vertex's failure, its first telling line, credentials removed."""
        if isinstance(error, EngineError):
            return error
        text = _cause(str(error))
        for secret in sorted(self.connection.secrets_or_none(), key=len, reverse=True):
            text = text.replace(secret, "***")
        text = text.replace(self.connection.url, f"<connection {self.connection.name}>")
        if "No suitable driver" in text or "ClassNotFoundException" in text:
            text += (
                " (no JDBC driver for this database is on the workers' class path: "
                "`make jdbc-driver` installs PostgreSQL's, JETSPARK_JDBC_DRIVER_JARS lists others)"
            )
        return EngineError(
            f"{self.kind}: {doing} {self.table!r} of connection "
            f"{self.connection.name!r} failed: {text}"
        )

    def guarded(self, doing: str, action: Callable[[], T]) -> T:
        try:
            return action()
        except Exception as error:  # py4j, the JVM and PySpark raise many kinds
            raise self.refused(error, doing) from None


def _cause(text: str) -> str:
    """The line of a Java or PySpark error that says what is wrong."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("at ")]
    causes = [line.removeprefix("Caused by:").strip() for line in lines if "Caused by:" in line]
    if causes:
        return causes[-1][:500]
    for line in lines:
        if "Exception:" in line or "Error:" in line or line.startswith("["):
            return line.removeprefix(": ")[:500]
    return (lines[0] if lines else "unknown error")[:500]


def _jvm(spark: SparkSession) -> Any:
    return spark.sparkContext._jvm


@lru_cache(maxsize=64)
def _dialect(spark: SparkSession, url: str) -> Any:
    """Spark's dialect for the database (asked once per session and URL: each py4j round
    trip is a millisecond or two of a job's fixed cost)."""
    return _jvm(spark).org.apache.spark.sql.jdbc.JdbcDialects.get(url)


@lru_cache(maxsize=4096)
def _quote(spark: SparkSession, url: str, identifier: str) -> str:
    return str(_dialect(spark, url).quoteIdentifier(identifier))


def quoted(spark: SparkSession, url: str, name: str) -> str:
    """``name`` (``table`` or ``schema.table``) quoted by the database's dialect, part by part."""
    parts = name.split(".")
    if not all(IDENTIFIER.match(part) for part in parts):
        raise EngineError(f"{name!r} is not a table name")
    return ".".join(_quote(spark, url, part) for part in parts)


def read_table(
    spark: SparkSession,
    target: Target,
    *,
    columns: list[str] | None,
    where: Column | None,
    partition: tuple[str, int, int] | None,
    partitions: int,
    fetch_size: int | None = None,
) -> DataFrame:
    """The table through Spark's JDBC source: ``partitions`` parallel reads split on
    ``partition`` (column, lower, upper) when given, else one; only ``columns`` (all when
    None); ``where`` pushed down where Spark can; ``fetch_size`` rows per round trip (None:
    the driver's default). An unknown table, a column it does not have
    or a type Spark cannot map fails here, before anything runs."""
    reader = spark.read.format("jdbc").options(**target.options())
    reader = reader.option("dbtable", quoted(spark, target.connection.url, target.table))
    if fetch_size is not None:
        reader = reader.option("fetchsize", str(fetch_size))
    if partition is not None:
        column, lower, upper = partition
        reader = (
            reader.option("partitionColumn", column)
            .option("lowerBound", str(lower))
            .option("upperBound", str(upper))
            .option("numPartitions", str(partitions))
        )
    frame = target.guarded("reading", reader.load)
    if where is not None:  # before the columns are chosen: it may test others
        frame = target.guarded("filtering", lambda: frame.where(where))
    if columns is not None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise EngineError(
                f"{target.kind}: table {target.table!r} has no "
                f"column {', '.join(map(repr, missing))} (it has {', '.join(frame.columns)})"
            )
        frame = frame.select(*[F.col(quote_identifier(c)) for c in columns])
    return frame


def _stage_name(target: Target, owner: str, epoch: int) -> str:
    digest = hashlib.sha256(f"{owner}\x00{target.vertex}\x00{epoch}".encode()).hexdigest()
    stage = f"jetspark_stage_{digest[:20]}"
    return ".".join([*target.parts[:-1], stage])


def _marker_table(target: Target) -> str:
    return ".".join([*target.parts[:-1], MARKERS])


_SAFE_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _checked_columns(target: Target, frame: DataFrame) -> list[str]:
    odd = [c for c in frame.columns if not _SAFE_COLUMN.match(c)]
    if odd:
        raise EngineError(
            f"{target.kind}: column names must be identifiers "
            f"(letters, digits, _) to be written to a table; rename {odd[:5]} with a map"
        )
    return list(frame.columns)


def append(spark: SparkSession, target: Target, frame: DataFrame) -> None:
    """Spark's own appends, a transaction per partition: at-least-once (a replayed epoch
    appends again)."""
    _checked_columns(target, frame)
    writer = frame.write.format("jdbc").options(**target.options()).mode("append")
    writer = writer.option("dbtable", quoted(spark, target.connection.url, target.table))
    target.guarded("appending to", writer.save)


@dataclass(frozen=True)
class Committed:
    """What a staged write did: ``skipped`` when its epoch had been committed before."""

    skipped: bool


def write_committed(
    spark: SparkSession,
    target: Target,
    frame: DataFrame,
    *,
    overwrite: bool,
    owner: str,
    epoch: int,
) -> Committed:
    """``frame``'s rows into the table at once: written by Spark to a staging table, then
    moved in one transaction with a marker row (``owner``, vertex, ``epoch``). A failure at
    any point leaves the table as it was (never a partial overwrite or append); a replay of
    a committed epoch finds its marker and writes nothing."""
    columns = _checked_columns(target, frame)
    url = target.connection.url
    stage = _stage_name(target, owner, epoch)
    writer = frame.write.format("jdbc").options(**target.options()).mode("overwrite")
    writer = writer.option("dbtable", quoted(spark, url, stage))
    try:
        target.guarded("staging rows for", writer.save)
    except BaseException:  # a cancelled job too: its partial staging table goes
        _drop_quietly(spark, target, stage)
        raise
    with _connection(spark, target) as connection:
        try:
            skipped = target.guarded(
                "committing to",
                lambda: _move(spark, connection, target, stage, columns, overwrite, owner, epoch),
            )
        finally:  # on the move's connection: one connection less for a job's fixed cost
            _drop_quietly(spark, target, stage, connection)
    return Committed(skipped)


def _move(
    spark: SparkSession,
    connection: Any,
    target: Target,
    stage: str,
    columns: list[str],
    overwrite: bool,
    owner: str,
    epoch: int,
) -> bool:
    """The transaction: marker checked, table created if missing, rows moved, marker added."""
    url = target.connection.url
    table, staged, markers = (
        quoted(spark, url, target.table),
        quoted(spark, url, stage),
        quoted(spark, url, _marker_table(target)),
    )
    dialect = _dialect(spark, url)
    names = ", ".join(_quote(spark, url, c) for c in columns)
    _ensure_markers(connection, markers)
    connection.setAutoCommit(False)
    try:
        check = connection.prepareStatement(
            f"SELECT 1 FROM {markers} WHERE job = ? AND vertex = ? AND epoch = ?"
        )
        check.setString(1, owner)
        check.setString(2, target.vertex)
        check.setLong(3, epoch)
        if check.executeQuery().next():
            connection.rollback()
            return True
        statement = connection.createStatement()
        if not _exists(connection, str(dialect.getTableExistsQuery(table))):
            statement.execute(f"CREATE TABLE {table} AS SELECT {names} FROM {staged} WHERE 1 = 0")
        if overwrite:
            statement.execute(f"DELETE FROM {table}")
        statement.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {staged}")
        mark = connection.prepareStatement(
            f"INSERT INTO {markers} (job, vertex, epoch) VALUES (?, ?, ?)"
        )
        mark.setString(1, owner)
        mark.setString(2, target.vertex)
        mark.setLong(3, epoch)
        mark.executeUpdate()
        connection.commit()
        return False
    except Exception:
        connection.rollback()
        raise


def _exists(connection: Any, query: str) -> bool:
    """Does the query of Spark's dialect for "does this table exist" run? Inside a savepoint:
    a failed statement aborts a PostgreSQL transaction."""
    savepoint = connection.setSavepoint()
    try:
        connection.createStatement().executeQuery(query)
    except Exception:
        connection.rollback(savepoint)
        return False
    connection.releaseSavepoint(savepoint)
    return True


def _ensure_markers(connection: Any, markers: str) -> None:
    """The marker table, created on first use (its own transaction; a concurrent creator's
    is as good as ours)."""
    connection.setAutoCommit(True)
    if _exists_autocommit(connection, f"SELECT 1 FROM {markers} WHERE 1 = 0"):
        return
    try:
        connection.createStatement().execute(
            f"CREATE TABLE {markers} (job VARCHAR(64) NOT NULL, vertex VARCHAR(256) NOT NULL,"
            " epoch BIGINT NOT NULL, PRIMARY KEY (job, vertex, epoch))"
        )
    except Exception:
        if not _exists_autocommit(connection, f"SELECT 1 FROM {markers} WHERE 1 = 0"):
            raise


def _exists_autocommit(connection: Any, query: str) -> bool:
    try:
        connection.createStatement().executeQuery(query)
    except Exception:
        return False
    return True


@contextmanager
def _connection(spark: SparkSession, target: Target) -> Iterator[Any]:
    """A JDBC connection on the driver, made by Spark's own factory (it loads the driver
    from the jars Spark was given, which ``DriverManager`` alone would not see)."""
    jvm = _jvm(spark)
    options = jvm.java.util.HashMap()
    for key, value in target.options().items():
        options.put(key, value)
    url = target.connection.url

    def connect() -> Any:
        jdbc_options = jvm.org.apache.spark.sql.execution.datasources.jdbc.JDBCOptions(
            url, quoted(spark, url, target.table), jvm.PythonUtils.toScalaMap(options)
        )
        return _dialect(spark, url).createConnectionFactory(jdbc_options).apply(-1)

    connection = target.guarded("connecting for", connect)
    try:
        yield connection
    finally:
        connection.close()


def _drop_quietly(
    spark: SparkSession, target: Target, stage: str, connection: Any | None = None
) -> None:
    """The staging table dropped, on ``connection`` if given, else on one of its own."""
    try:
        if connection is None:
            with _connection(spark, target) as own:
                _drop(spark, own, target, stage)
        else:
            _drop(spark, connection, target, stage)
    except Exception as error:  # a leftover staging table is dropped by the epoch's replay
        log.warning(
            "staging table not dropped",
            vertex=target.vertex,
            table=stage,
            error=type(error).__name__,
        )


def _drop(spark: SparkSession, connection: Any, target: Target, stage: str) -> None:
    connection.setAutoCommit(True)
    staged = quoted(spark, target.connection.url, stage)
    if _exists_autocommit(connection, f"SELECT 1 FROM {staged} WHERE 1 = 0"):
        connection.createStatement().execute(f"DROP TABLE {staged}")
