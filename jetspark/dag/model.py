"""Pydantic input models of the submitted job (SPEC §3). Input models forbid extra fields."""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from jetspark.webhooks.targets import MAX_URL_CHARS, MAX_URLS, check_syntax

Name = Annotated[str, Field(min_length=1, max_length=256)]
PositiveInt = Annotated[int, Field(ge=1)]
NotifyUrl = Annotated[
    str, Field(min_length=1, max_length=MAX_URL_CHARS), AfterValidator(check_syntax)
]


class Routing(StrEnum):
    unicast = "unicast"
    broadcast = "broadcast"
    partitioned = "partitioned"
    all_to_one = "all_to_one"


class ProcessingGuarantee(StrEnum):
    none = "none"
    at_least_once = "at_least_once"
    exactly_once = "exactly_once"


class InputModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class EdgeConfig(InputModel):
    """Jet's fine-tuning options of an edge."""

    outbox_capacity: PositiveInt = 2048
    queue_size: PositiveInt = 1024
    packet_size_limit: PositiveInt = 16384
    receive_window_multiplier: PositiveInt = 3


class VertexSpec(InputModel):
    name: Name
    processor: Annotated[str, Field(min_length=1, max_length=256)]
    params: dict[str, Any] = Field(default_factory=dict)
    local_parallelism: PositiveInt | None = None


class EdgeSpec(InputModel):
    source: Name = Field(alias="from")
    from_ordinal: Annotated[int, Field(ge=0)] = 0
    to: Name
    to_ordinal: Annotated[int, Field(ge=0)] = 0
    routing: Routing = Routing.unicast
    key: str | None = None
    partitioner: str = "murmur3"
    distributed: bool = False
    priority: int = 0
    buffered: bool = False
    config: EdgeConfig = Field(default_factory=EdgeConfig)

    @property
    def label(self) -> str:
        return f"{self.source} -> {self.to}"


class DagSpec(InputModel):
    vertices: list[VertexSpec]
    edges: list[EdgeSpec] = Field(default_factory=list)


class JobConfig(InputModel):
    members: PositiveInt | None = None
    local_parallelism: PositiveInt | None = None
    partition_count: PositiveInt = 271
    processing_guarantee: ProcessingGuarantee = ProcessingGuarantee.none
    snapshot_interval_ms: PositiveInt = 10_000
    """How often a stream's state is saved (under a guarantee), apart from its epochs."""
    epoch_interval_ms: PositiveInt | None = None
    """How often a stream's epochs run, so how often results flow, whatever the guarantee
    (None: the worker's ``JETSPARK_STREAM_EPOCH_INTERVAL_MS``)."""
    initial_snapshot: str | None = None
    backup_count: Annotated[int, Field(ge=0, le=6)] = 0
    """Redis replicas each snapshot write waits for (``WAIT``) before it commits; with fewer
    online, the ones there are, and the job goes on under-replicated."""
    require_backups: bool = False
    """Fail a snapshot, and so the job, when fewer than ``backup_count`` replicas acknowledge
    it within 30 s (``SnapshotBackupsMissing``), rather than go on under-replicated."""
    max_processor_accumulated_records: PositiveInt | None = None
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    notify: Annotated[list[NotifyUrl], Field(max_length=MAX_URLS)] = Field(default_factory=list)
    """Webhook URLs POSTed a signed JSON body on every status change of the job (SPEC
    "Webhooks"); each must pass the server's target rules at submission and delivery."""


class JobSpec(InputModel):
    """The body of ``POST /v1/jobs``."""

    name: Name
    dag: DagSpec
    config: JobConfig = Field(default_factory=JobConfig)

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON: equal bodies, equal fingerprints."""
        canonical = json.dumps(self.as_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()
