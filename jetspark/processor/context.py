"""What a processor learns about its place in the job when it is initialised."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Context:
    """Jet's ``Processor.Context`` in Python names.

    Processor ``global_index`` g of a vertex runs as Spark partition g (SPEC §4): it lives on
    member ``g // local_parallelism`` as local processor ``g % local_parallelism``.
    """

    vertex_name: str
    global_index: int
    local_parallelism: int
    total_parallelism: int
    args: Mapping[str, Any] = field(default_factory=dict)
    inbound_ordinals: int = 0
    outbound_ordinals: int = 1

    @property
    def local_index(self) -> int:
        return self.global_index % self.local_parallelism

    @property
    def member(self) -> int:
        return self.global_index // self.local_parallelism
