from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.processor_metrics_emitted_by_ordinal import ProcessorMetricsEmittedByOrdinal
  from ..models.processor_metrics_received_by_ordinal import ProcessorMetricsReceivedByOrdinal





T = TypeVar("T", bound="ProcessorMetrics")



@_attrs_define
class ProcessorMetrics:
    """ One processor of a vertex (see the module docstring).

        Attributes:
            index (int):
            backpressure_ratio (float | Unset):  Default: 0.0.
            busy_ratio (float | Unset):  Default: 0.0.
            coalesced_wm (int | None | Unset):
            emitted_by_ordinal (ProcessorMetricsEmittedByOrdinal | Unset):
            idle (bool | Unset):  Default: False.
            items_in (int | Unset):  Default: 0.
            items_out (int | Unset):  Default: 0.
            last_forwarded_wm (int | None | Unset):
            late_items_dropped (int | Unset):  Default: 0.
            member (int | Unset):  Default: 0.
            queue_capacity (int | Unset):  Default: 0.
            queue_size (int | Unset):  Default: 0.
            received_by_ordinal (ProcessorMetricsReceivedByOrdinal | Unset):
            top_observed_wm (int | None | Unset):
     """

    index: int
    backpressure_ratio: float | Unset = 0.0
    busy_ratio: float | Unset = 0.0
    coalesced_wm: int | None | Unset = UNSET
    emitted_by_ordinal: ProcessorMetricsEmittedByOrdinal | Unset = UNSET
    idle: bool | Unset = False
    items_in: int | Unset = 0
    items_out: int | Unset = 0
    last_forwarded_wm: int | None | Unset = UNSET
    late_items_dropped: int | Unset = 0
    member: int | Unset = 0
    queue_capacity: int | Unset = 0
    queue_size: int | Unset = 0
    received_by_ordinal: ProcessorMetricsReceivedByOrdinal | Unset = UNSET
    top_observed_wm: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.processor_metrics_emitted_by_ordinal import ProcessorMetricsEmittedByOrdinal # noqa: PLC0415
        from ..models.processor_metrics_received_by_ordinal import ProcessorMetricsReceivedByOrdinal # noqa: PLC0415
        index = self.index

        backpressure_ratio = self.backpressure_ratio

        busy_ratio = self.busy_ratio

        coalesced_wm: int | None | Unset
        if isinstance(self.coalesced_wm, Unset):
            coalesced_wm = UNSET
        else:
            coalesced_wm = self.coalesced_wm

        emitted_by_ordinal: dict[str, Any] | Unset = UNSET
        if not isinstance(self.emitted_by_ordinal, Unset):
            emitted_by_ordinal = self.emitted_by_ordinal.to_dict()

        idle = self.idle

        items_in = self.items_in

        items_out = self.items_out

        last_forwarded_wm: int | None | Unset
        if isinstance(self.last_forwarded_wm, Unset):
            last_forwarded_wm = UNSET
        else:
            last_forwarded_wm = self.last_forwarded_wm

        late_items_dropped = self.late_items_dropped

        member = self.member

        queue_capacity = self.queue_capacity

        queue_size = self.queue_size

        received_by_ordinal: dict[str, Any] | Unset = UNSET
        if not isinstance(self.received_by_ordinal, Unset):
            received_by_ordinal = self.received_by_ordinal.to_dict()

        top_observed_wm: int | None | Unset
        if isinstance(self.top_observed_wm, Unset):
            top_observed_wm = UNSET
        else:
            top_observed_wm = self.top_observed_wm


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "index": index,
        })
        if backpressure_ratio is not UNSET:
            field_dict["backpressure_ratio"] = backpressure_ratio
        if busy_ratio is not UNSET:
            field_dict["busy_ratio"] = busy_ratio
        if coalesced_wm is not UNSET:
            field_dict["coalesced_wm"] = coalesced_wm
        if emitted_by_ordinal is not UNSET:
            field_dict["emitted_by_ordinal"] = emitted_by_ordinal
        if idle is not UNSET:
            field_dict["idle"] = idle
        if items_in is not UNSET:
            field_dict["items_in"] = items_in
        if items_out is not UNSET:
            field_dict["items_out"] = items_out
        if last_forwarded_wm is not UNSET:
            field_dict["last_forwarded_wm"] = last_forwarded_wm
        if late_items_dropped is not UNSET:
            field_dict["late_items_dropped"] = late_items_dropped
        if member is not UNSET:
            field_dict["member"] = member
        if queue_capacity is not UNSET:
            field_dict["queue_capacity"] = queue_capacity
        if queue_size is not UNSET:
            field_dict["queue_size"] = queue_size
        if received_by_ordinal is not UNSET:
            field_dict["received_by_ordinal"] = received_by_ordinal
        if top_observed_wm is not UNSET:
            field_dict["top_observed_wm"] = top_observed_wm

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.processor_metrics_emitted_by_ordinal import ProcessorMetricsEmittedByOrdinal # noqa: PLC0415
        from ..models.processor_metrics_received_by_ordinal import ProcessorMetricsReceivedByOrdinal # noqa: PLC0415
        d = dict(src_dict)
        index = d.pop("index")

        backpressure_ratio = d.pop("backpressure_ratio", UNSET)

        busy_ratio = d.pop("busy_ratio", UNSET)

        def _parse_coalesced_wm(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        coalesced_wm = _parse_coalesced_wm(d.pop("coalesced_wm", UNSET))


        _emitted_by_ordinal = d.pop("emitted_by_ordinal", UNSET)
        emitted_by_ordinal: ProcessorMetricsEmittedByOrdinal | Unset
        if isinstance(_emitted_by_ordinal,  Unset):
            emitted_by_ordinal = UNSET
        else:
            emitted_by_ordinal = ProcessorMetricsEmittedByOrdinal.from_dict(_emitted_by_ordinal)




        idle = d.pop("idle", UNSET)

        items_in = d.pop("items_in", UNSET)

        items_out = d.pop("items_out", UNSET)

        def _parse_last_forwarded_wm(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_forwarded_wm = _parse_last_forwarded_wm(d.pop("last_forwarded_wm", UNSET))


        late_items_dropped = d.pop("late_items_dropped", UNSET)

        member = d.pop("member", UNSET)

        queue_capacity = d.pop("queue_capacity", UNSET)

        queue_size = d.pop("queue_size", UNSET)

        _received_by_ordinal = d.pop("received_by_ordinal", UNSET)
        received_by_ordinal: ProcessorMetricsReceivedByOrdinal | Unset
        if isinstance(_received_by_ordinal,  Unset):
            received_by_ordinal = UNSET
        else:
            received_by_ordinal = ProcessorMetricsReceivedByOrdinal.from_dict(_received_by_ordinal)




        def _parse_top_observed_wm(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        top_observed_wm = _parse_top_observed_wm(d.pop("top_observed_wm", UNSET))


        processor_metrics = cls(
            index=index,
            backpressure_ratio=backpressure_ratio,
            busy_ratio=busy_ratio,
            coalesced_wm=coalesced_wm,
            emitted_by_ordinal=emitted_by_ordinal,
            idle=idle,
            items_in=items_in,
            items_out=items_out,
            last_forwarded_wm=last_forwarded_wm,
            late_items_dropped=late_items_dropped,
            member=member,
            queue_capacity=queue_capacity,
            queue_size=queue_size,
            received_by_ordinal=received_by_ordinal,
            top_observed_wm=top_observed_wm,
        )


        processor_metrics.additional_properties = d
        return processor_metrics

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
