from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="EdgeConfig")



@_attrs_define
class EdgeConfig:
    """ Jet's fine-tuning options of an edge.

        Attributes:
            outbox_capacity (int | Unset):  Default: 2048.
            packet_size_limit (int | Unset):  Default: 16384.
            queue_size (int | Unset):  Default: 1024.
            receive_window_multiplier (int | Unset):  Default: 3.
     """

    outbox_capacity: int | Unset = 2048
    packet_size_limit: int | Unset = 16384
    queue_size: int | Unset = 1024
    receive_window_multiplier: int | Unset = 3





    def to_dict(self) -> dict[str, Any]:
        outbox_capacity = self.outbox_capacity

        packet_size_limit = self.packet_size_limit

        queue_size = self.queue_size

        receive_window_multiplier = self.receive_window_multiplier


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if outbox_capacity is not UNSET:
            field_dict["outbox_capacity"] = outbox_capacity
        if packet_size_limit is not UNSET:
            field_dict["packet_size_limit"] = packet_size_limit
        if queue_size is not UNSET:
            field_dict["queue_size"] = queue_size
        if receive_window_multiplier is not UNSET:
            field_dict["receive_window_multiplier"] = receive_window_multiplier

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        outbox_capacity = d.pop("outbox_capacity", UNSET)

        packet_size_limit = d.pop("packet_size_limit", UNSET)

        queue_size = d.pop("queue_size", UNSET)

        receive_window_multiplier = d.pop("receive_window_multiplier", UNSET)

        edge_config = cls(
            outbox_capacity=outbox_capacity,
            packet_size_limit=packet_size_limit,
            queue_size=queue_size,
            receive_window_multiplier=receive_window_multiplier,
        )

        return edge_config

