# jetspark: API and worker image (`jetspark api`, `jetspark worker`, `jetspark migrate`).
# Bookworm, not the newer default base: Debian 13 no longer ships Java 17, which Spark 4 needs.
FROM python:3.11-slim-bookworm

# procps: Spark's launch scripts call `ps`. The man folder: slim images drop it, and the JRE's
# post-install step fails without it.
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYSPARK_PYTHON=/usr/local/bin/python \
    SPARK_LOCAL_IP=127.0.0.1

WORKDIR /src
# Metadata first: the dependency layer is rebuilt only when pyproject.toml changes.
COPY pyproject.toml README.md ./
RUN mkdir -p jetspark && echo '__version__ = "0"' > jetspark/__init__.py \
    && pip install . \
    && pip uninstall -y jetspark
COPY jetspark ./jetspark
COPY api ./api
COPY worker ./worker
COPY migrations ./migrations
RUN pip install --no-deps . && rm -rf /src

RUN useradd --create-home --uid 10001 --user-group jetspark
USER jetspark
WORKDIR /home/jetspark

EXPOSE 8000
ENTRYPOINT ["jetspark"]
CMD ["--help"]
