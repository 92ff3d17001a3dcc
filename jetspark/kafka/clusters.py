"""Operator-named Kafka clusters (``JETSPARK_KAFKA_CLUSTERS``) and the topics each principal
may use on them, as Redis names are held to a principal's own.

A DAG names a cluster and topics, never a broker address. The operator lists, per cluster,
the topics each principal may read and write: a name (``orders``) or a prefix ending in
``*`` (``alice.*``); ``"*"`` as the principal stands for every principal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jetspark.dag.errors import DagProblem
from jetspark.dag.kinds import PROCESSORS, Resources
from jetspark.dag.model import JobSpec
from jetspark.json_setting import json_object

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
"""A Kafka topic name (Kafka's own rule)."""
ANY_PRINCIPAL = "*"


class KafkaConfigError(ValueError):
    """``JETSPARK_KAFKA_CLUSTERS`` cannot be used; one line naming what is wrong."""


class TopicRefused(ValueError):
    """An unknown cluster, or a topic the principal may not use there."""


@dataclass(frozen=True)
class KafkaCluster:
    name: str
    bootstrap: str
    topics: Mapping[str, tuple[str, ...]]
    """Principal (or ``*``) -> the topic names and ``prefix*`` patterns it may use."""

    def allows(self, principal: str, topic: str) -> bool:
        for who in (principal, ANY_PRINCIPAL):
            for rule in self.topics.get(who, ()):
                if topic == rule or (rule.endswith("*") and topic.startswith(rule[:-1])):
                    return True
        return False


@dataclass(frozen=True)
class KafkaClusters:
    by_name: Mapping[str, KafkaCluster] = field(default_factory=dict)

    def for_principal(self, name: str, principal: str, topics: Iterable[str]) -> KafkaCluster:
        cluster = self.by_name.get(name)
        if cluster is None:
            known = ", ".join(sorted(self.by_name)) or "none are configured"
            raise TopicRefused(f"unknown Kafka cluster {name!r} (known: {known})")
        for topic in topics:
            if not cluster.allows(principal, topic):
                raise TopicRefused(
                    f"principal {principal!r} may not use topic {topic!r} of Kafka cluster {name!r}"
                )
        return cluster

    @classmethod
    def parse(cls, text: str | None, source: str = "JETSPARK_KAFKA_CLUSTERS") -> KafkaClusters:
        """``{"name": {"bootstrap": "host:9092,...", "topics": {"alice": ["orders",
        "alice.*"], "*": ["public.*"]}}}``."""
        if text is None or not text.strip():
            return cls()
        value = json_object(text, source, "clusters by name", KafkaConfigError)
        return cls({name: _cluster(name, entry, source) for name, entry in value.items()})


def _cluster(name: str, entry: Any, source: str) -> KafkaCluster:
    where = f"{source}: cluster {str(name)[:64]!r}"
    if not NAME.match(name):
        raise KafkaConfigError(f"{where}: a name is letters, digits, _ . - (at most 64)")
    if not isinstance(entry, dict) or set(entry) - {"bootstrap", "topics"}:
        raise KafkaConfigError(f"{where} must be an object of bootstrap and topics")
    bootstrap = entry.get("bootstrap")
    if not isinstance(bootstrap, str) or not bootstrap:
        raise KafkaConfigError(f"{where}: bootstrap must be host:port[,host:port...]")
    topics = entry.get("topics")
    if not isinstance(topics, dict) or not all(
        isinstance(rules, list) and all(isinstance(r, str) and r for r in rules)
        for rules in topics.values()
    ):
        raise KafkaConfigError(f"{where}: topics must map principals to lists of topic rules")
    return KafkaCluster(name, bootstrap, {p: tuple(r) for p, r in topics.items()})


def topic_problems(spec: JobSpec, principal: str, clusters: KafkaClusters) -> list[DagProblem]:
    """A problem (422, naming its param) for each unknown cluster or topic ``principal`` may
    not use: nothing is read or written then. Which params name the cluster and the topics is
    the kind's (``Resources.kafka_cluster`` and ``Resources.kafka_topics``)."""
    problems = []
    for i, vertex in enumerate(spec.dag.vertices):
        kind = PROCESSORS.get(vertex.processor)
        resources = kind.resources if kind is not None else Resources()
        named = resources.kafka_cluster
        cluster = vertex.params.get(named) if named is not None else None
        if not isinstance(cluster, str):
            continue
        try:
            clusters.for_principal(cluster, principal, [])
        except TopicRefused as refused:
            problems.append(DagProblem(f"/dag/vertices/{i}/params/{named}", str(refused)))
            continue
        for param in resources.kafka_topics:
            value = vertex.params.get(param)
            problems += _refused_topics(value, clusters, cluster, principal, i, param)
    return problems


def _refused_topics(
    value: Any, clusters: KafkaClusters, cluster: str, principal: str, vertex: int, param: str
) -> list[DagProblem]:
    """A param's topics (one, or a list of them) ``principal`` may not use on ``cluster``."""
    is_list = isinstance(value, list)
    problems: list[DagProblem] = []
    for j, topic in enumerate(value if is_list else [value]):
        if not isinstance(topic, str):
            continue
        try:
            clusters.for_principal(cluster, principal, [topic])
        except TopicRefused as refused:
            pointer = f"/dag/vertices/{vertex}/params/{param}" + (f"/{j}" if is_list else "")
            problems.append(DagProblem(pointer, str(refused)))
    return problems
