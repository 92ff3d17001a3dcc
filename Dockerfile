# jetspark: API and worker image (`jetspark api`, `jetspark worker`, `jetspark migrate`).
# Bookworm, not the newer default base: Debian 13 no longer ships Java 17, which Spark 4 needs.
FROM python:3.11-slim-bookworm

# procps: Spark's launch scripts call `ps`. The man folder: slim images drop it, and the JRE's
# post-install step fails without it. libpostgresql-jdbc-java: PostgreSQL's JDBC driver for
# source.jdbc / sink.jdbc (JETSPARK_JDBC_DRIVER_JARS names it by default).
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
       libpostgresql-jdbc-java \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYSPARK_PYTHON=/usr/local/bin/python \
    SPARK_LOCAL_IP=127.0.0.1

WORKDIR /src
# The runtime lock first (`make lock` writes it): this layer is rebuilt only when it changes, and
# the image gets the versions CI tested. No `embedded` extra: the image's servers are yours.
COPY requirements/runtime.txt requirements/runtime.txt
RUN pip install -r requirements/runtime.txt && pip check
# Every top-level package of pyproject.toml (tests/test_packaging.py checks the list), the SDK's
# generated client (clients/) among them.
COPY pyproject.toml README.md ./
COPY jetspark ./jetspark
COPY api ./api
COPY worker ./worker
COPY launcher ./launcher
COPY migrations ./migrations
COPY clients ./clients
RUN pip install --no-deps . && rm -rf /src

RUN useradd --create-home --uid 10001 --user-group jetspark
USER jetspark
WORKDIR /home/jetspark

EXPOSE 8000
ENTRYPOINT ["jetspark"]
CMD ["--help"]
