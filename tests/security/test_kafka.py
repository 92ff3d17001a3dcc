"""A DAG naming a Kafka cluster or topic its principal may not use is refused (422) at
submission and validation, naming the param; nothing is queued."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import httpx
import pytest

from api.app import create_app
from jetspark.settings import ApiSettings, KafkaSettings, TenantSettings
from tests.kafka.test_kafka import topic_job
from tests.live_server import live_server


@pytest.fixture(scope="module")
def api(database_url: str, redis_url: str, redis_namespace: str) -> Iterator[tuple[str, str]]:
    token = f"carol-{uuid.uuid4().hex}"
    clusters = {"events": {"bootstrap": "kafka.internal:9092", "topics": {"alice": ["t-*"]}}}
    app = create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(rate_limit_per_s=0),
        tenant_settings=TenantSettings(api_principals=[f"carol:{token}"]),
        kafka_settings=KafkaSettings(clusters=json.dumps(clusters)),
    )
    with live_server(app) as url:
        yield url, token


def test_topics_another_principal_may_use_are_refused(api: tuple[str, str]) -> None:
    url, token = api
    sink = {"processor": "sink.kafka", "params": {"cluster": "events", "topic": "t-out"}}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as carol:
        for path in ("/v1/jobs", "/v1/dags:validate"):
            refused = carol.post(path, json=topic_job("t-in", sink))
            assert refused.status_code == 422, refused.text
            assert [e["pointer"] for e in refused.json()["errors"]] == [
                "/dag/vertices/0/params/topics/0",
                "/dag/vertices/2/params/topic",
            ]
            assert "kafka.internal" not in refused.text
        assert carol.get("/v1/jobs").json()["items"] == []
