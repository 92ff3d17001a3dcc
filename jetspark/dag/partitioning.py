"""SPEC §4: the partition of a key and the processor an item is routed to.

``pid = mmh3.hash(canonical(key), 42) % partition_count``. Spark's ``hash()`` is the same
MurmurHash3 on 8-byte longs and on byte strings whose length is a multiple of 4, hence the
NUL padding: the JVM computes the same pid with ``pmod(hash(...), partition_count)``.
"""

from __future__ import annotations

import json

import mmh3

DEFAULT_PARTITION_COUNT = 271
MURMUR3_SEED = 42


def _pad4(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def canonical(key: object) -> bytes:
    """The bytes a key is hashed as."""
    if key is None:
        return b""
    if isinstance(key, bool | int):
        return int(key).to_bytes(8, "little", signed=True)
    if isinstance(key, str):
        return _pad4(key.encode("utf-8"))
    if isinstance(key, bytes | bytearray):
        return _pad4(bytes(key))
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _pad4(text.encode("utf-8"))


def partition_id(key: object, partition_count: int = DEFAULT_PARTITION_COUNT) -> int:
    return int(mmh3.hash(canonical(key), MURMUR3_SEED)) % partition_count


def member_of(processor_index: int, local_parallelism: int) -> int:
    """Processor g lives on member g // local_parallelism."""
    return processor_index // local_parallelism


def partitioned_target(
    pid: int, *, distributed: bool, member: int, parallelism: int, local_parallelism: int
) -> int:
    """Global index of the processor that receives partition ``pid`` from a sender on ``member``."""
    if distributed:
        return pid % parallelism
    return member * local_parallelism + pid % local_parallelism
