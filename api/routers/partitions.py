"""/v1/partitions — where a key goes (SPEC §4), computed as the engine computes it."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Literal

import redis
import structlog
from fastapi import APIRouter, Query

from api.deps import EngineBoundsDep, PrincipalDep, RedisDep
from api.problems import PROBLEM_RESPONSES, Problem
from api.schemas import PartitionStorageView, PartitionView
from jetspark.dag.partitioning import DEFAULT_PARTITION_COUNT, canonical, partition_id
from jetspark.json_depth import text_depth
from jetspark.placement import placement

log = structlog.get_logger("jetspark.api")

router = APIRouter(prefix="/v1", tags=["partitions"], responses=PROBLEM_RESPONSES)


@router.get("/partitions", operation_id="partitions-get", response_model=PartitionView)
def get_partition(
    _principal: PrincipalDep,
    client: RedisDep,
    bounds: EngineBoundsDep,
    key: Annotated[str, Query(max_length=4096)],
    key_type: Annotated[Literal["string", "int", "json"], Query()] = "string",
    partition_count: Annotated[int, Query(ge=1, le=1_000_000)] = DEFAULT_PARTITION_COUNT,
) -> PartitionView:
    """The partition id of ``key`` (a string, an integer with ``key_type=int`` or a JSON
    value) and where that partition's snapshot state lives: its Redis hash tag and, on a
    Redis Cluster, the slot and the primary and replicas serving it now."""
    value: object = key
    try:
        if key_type == "int":
            value = int(key)
            if not -(2**63) <= value < 2**63:
                raise ValueError("outside the 64-bit range")
        elif key_type == "json":
            limit = bounds.json_depth
            if text_depth(key) > limit:
                raise ValueError(f"nested deeper than {limit} levels")
            value = json.loads(key)
    except ValueError as error:
        raise Problem(422, f"key {key!r} is not a valid {key_type}: {error}") from None
    pid = partition_id(value, partition_count)
    storage = None
    try:
        storage = PartitionStorageView.model_validate(dataclasses.asdict(placement(client, pid)))
    except redis.RedisError as error:  # the partition id does not need Redis
        log.warning("partition placement unknown", error=str(error)[:300])
    return PartitionView(
        key=value,
        canonical_hex=canonical(value).hex(),
        partition_id=pid,
        partition_count=partition_count,
        storage=storage,
    )
