from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.backpressure_level import BackpressureLevel
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.processor_metrics import ProcessorMetrics
  from ..models.vertex_metrics_emitted_by_ordinal import VertexMetricsEmittedByOrdinal
  from ..models.vertex_metrics_received_by_ordinal import VertexMetricsReceivedByOrdinal





T = TypeVar("T", bound="VertexMetrics")



@_attrs_define
class VertexMetrics:
    """ A vertex: its processors aggregated, plus rates and lag (see the module docstring).

        Attributes:
            backpressure_level (BackpressureLevel | Unset): SPEC §6: ok < 0.1 <= low < 0.5 <= high.
            backpressure_ratio (float | Unset):  Default: 0.0.
            bottleneck (bool | Unset):  Default: False.
            busy_ratio (float | Unset):  Default: 0.0.
            coalesced_wm (int | None | Unset):
            emitted_by_ordinal (VertexMetricsEmittedByOrdinal | Unset):
            event_time_gap_ms (int | None | Unset):
            event_time_per_s (float | None | Unset):
            idle (bool | Unset):  Default: False.
            input_rate_per_s (float | None | Unset):
            items_in (int | Unset):  Default: 0.
            items_out (int | Unset):  Default: 0.
            items_out_per_s (float | None | Unset):
            lag_ms (int | None | Unset):
            last_forwarded_wm (int | None | Unset):
            late_items_dropped (int | Unset):  Default: 0.
            processing_rate_per_s (float | None | Unset):
            processors (list[ProcessorMetrics] | Unset):
            queue_capacity (int | Unset):  Default: 0.
            queue_size (int | Unset):  Default: 0.
            received_by_ordinal (VertexMetricsReceivedByOrdinal | Unset):
            top_observed_wm (int | None | Unset):
     """

    backpressure_level: BackpressureLevel | Unset = UNSET
    backpressure_ratio: float | Unset = 0.0
    bottleneck: bool | Unset = False
    busy_ratio: float | Unset = 0.0
    coalesced_wm: int | None | Unset = UNSET
    emitted_by_ordinal: VertexMetricsEmittedByOrdinal | Unset = UNSET
    event_time_gap_ms: int | None | Unset = UNSET
    event_time_per_s: float | None | Unset = UNSET
    idle: bool | Unset = False
    input_rate_per_s: float | None | Unset = UNSET
    items_in: int | Unset = 0
    items_out: int | Unset = 0
    items_out_per_s: float | None | Unset = UNSET
    lag_ms: int | None | Unset = UNSET
    last_forwarded_wm: int | None | Unset = UNSET
    late_items_dropped: int | Unset = 0
    processing_rate_per_s: float | None | Unset = UNSET
    processors: list[ProcessorMetrics] | Unset = UNSET
    queue_capacity: int | Unset = 0
    queue_size: int | Unset = 0
    received_by_ordinal: VertexMetricsReceivedByOrdinal | Unset = UNSET
    top_observed_wm: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.processor_metrics import ProcessorMetrics # noqa: PLC0415
        from ..models.vertex_metrics_emitted_by_ordinal import VertexMetricsEmittedByOrdinal # noqa: PLC0415
        from ..models.vertex_metrics_received_by_ordinal import VertexMetricsReceivedByOrdinal # noqa: PLC0415
        backpressure_level: str | Unset = UNSET
        if not isinstance(self.backpressure_level, Unset):
            backpressure_level = self.backpressure_level.value


        backpressure_ratio = self.backpressure_ratio

        bottleneck = self.bottleneck

        busy_ratio = self.busy_ratio

        coalesced_wm: int | None | Unset
        if isinstance(self.coalesced_wm, Unset):
            coalesced_wm = UNSET
        else:
            coalesced_wm = self.coalesced_wm

        emitted_by_ordinal: dict[str, Any] | Unset = UNSET
        if not isinstance(self.emitted_by_ordinal, Unset):
            emitted_by_ordinal = self.emitted_by_ordinal.to_dict()

        event_time_gap_ms: int | None | Unset
        if isinstance(self.event_time_gap_ms, Unset):
            event_time_gap_ms = UNSET
        else:
            event_time_gap_ms = self.event_time_gap_ms

        event_time_per_s: float | None | Unset
        if isinstance(self.event_time_per_s, Unset):
            event_time_per_s = UNSET
        else:
            event_time_per_s = self.event_time_per_s

        idle = self.idle

        input_rate_per_s: float | None | Unset
        if isinstance(self.input_rate_per_s, Unset):
            input_rate_per_s = UNSET
        else:
            input_rate_per_s = self.input_rate_per_s

        items_in = self.items_in

        items_out = self.items_out

        items_out_per_s: float | None | Unset
        if isinstance(self.items_out_per_s, Unset):
            items_out_per_s = UNSET
        else:
            items_out_per_s = self.items_out_per_s

        lag_ms: int | None | Unset
        if isinstance(self.lag_ms, Unset):
            lag_ms = UNSET
        else:
            lag_ms = self.lag_ms

        last_forwarded_wm: int | None | Unset
        if isinstance(self.last_forwarded_wm, Unset):
            last_forwarded_wm = UNSET
        else:
            last_forwarded_wm = self.last_forwarded_wm

        late_items_dropped = self.late_items_dropped

        processing_rate_per_s: float | None | Unset
        if isinstance(self.processing_rate_per_s, Unset):
            processing_rate_per_s = UNSET
        else:
            processing_rate_per_s = self.processing_rate_per_s

        processors: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.processors, Unset):
            processors = []
            for processors_item_data in self.processors:
                processors_item = processors_item_data.to_dict()
                processors.append(processors_item)



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
        })
        if backpressure_level is not UNSET:
            field_dict["backpressure_level"] = backpressure_level
        if backpressure_ratio is not UNSET:
            field_dict["backpressure_ratio"] = backpressure_ratio
        if bottleneck is not UNSET:
            field_dict["bottleneck"] = bottleneck
        if busy_ratio is not UNSET:
            field_dict["busy_ratio"] = busy_ratio
        if coalesced_wm is not UNSET:
            field_dict["coalesced_wm"] = coalesced_wm
        if emitted_by_ordinal is not UNSET:
            field_dict["emitted_by_ordinal"] = emitted_by_ordinal
        if event_time_gap_ms is not UNSET:
            field_dict["event_time_gap_ms"] = event_time_gap_ms
        if event_time_per_s is not UNSET:
            field_dict["event_time_per_s"] = event_time_per_s
        if idle is not UNSET:
            field_dict["idle"] = idle
        if input_rate_per_s is not UNSET:
            field_dict["input_rate_per_s"] = input_rate_per_s
        if items_in is not UNSET:
            field_dict["items_in"] = items_in
        if items_out is not UNSET:
            field_dict["items_out"] = items_out
        if items_out_per_s is not UNSET:
            field_dict["items_out_per_s"] = items_out_per_s
        if lag_ms is not UNSET:
            field_dict["lag_ms"] = lag_ms
        if last_forwarded_wm is not UNSET:
            field_dict["last_forwarded_wm"] = last_forwarded_wm
        if late_items_dropped is not UNSET:
            field_dict["late_items_dropped"] = late_items_dropped
        if processing_rate_per_s is not UNSET:
            field_dict["processing_rate_per_s"] = processing_rate_per_s
        if processors is not UNSET:
            field_dict["processors"] = processors
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
        from ..models.processor_metrics import ProcessorMetrics # noqa: PLC0415
        from ..models.vertex_metrics_emitted_by_ordinal import VertexMetricsEmittedByOrdinal # noqa: PLC0415
        from ..models.vertex_metrics_received_by_ordinal import VertexMetricsReceivedByOrdinal # noqa: PLC0415
        d = dict(src_dict)
        _backpressure_level = d.pop("backpressure_level", UNSET)
        backpressure_level: BackpressureLevel | Unset
        if isinstance(_backpressure_level,  Unset):
            backpressure_level = UNSET
        else:
            backpressure_level = BackpressureLevel(_backpressure_level)




        backpressure_ratio = d.pop("backpressure_ratio", UNSET)

        bottleneck = d.pop("bottleneck", UNSET)

        busy_ratio = d.pop("busy_ratio", UNSET)

        def _parse_coalesced_wm(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        coalesced_wm = _parse_coalesced_wm(d.pop("coalesced_wm", UNSET))


        _emitted_by_ordinal = d.pop("emitted_by_ordinal", UNSET)
        emitted_by_ordinal: VertexMetricsEmittedByOrdinal | Unset
        if isinstance(_emitted_by_ordinal,  Unset):
            emitted_by_ordinal = UNSET
        else:
            emitted_by_ordinal = VertexMetricsEmittedByOrdinal.from_dict(_emitted_by_ordinal)




        def _parse_event_time_gap_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        event_time_gap_ms = _parse_event_time_gap_ms(d.pop("event_time_gap_ms", UNSET))


        def _parse_event_time_per_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        event_time_per_s = _parse_event_time_per_s(d.pop("event_time_per_s", UNSET))


        idle = d.pop("idle", UNSET)

        def _parse_input_rate_per_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        input_rate_per_s = _parse_input_rate_per_s(d.pop("input_rate_per_s", UNSET))


        items_in = d.pop("items_in", UNSET)

        items_out = d.pop("items_out", UNSET)

        def _parse_items_out_per_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        items_out_per_s = _parse_items_out_per_s(d.pop("items_out_per_s", UNSET))


        def _parse_lag_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        lag_ms = _parse_lag_ms(d.pop("lag_ms", UNSET))


        def _parse_last_forwarded_wm(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_forwarded_wm = _parse_last_forwarded_wm(d.pop("last_forwarded_wm", UNSET))


        late_items_dropped = d.pop("late_items_dropped", UNSET)

        def _parse_processing_rate_per_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        processing_rate_per_s = _parse_processing_rate_per_s(d.pop("processing_rate_per_s", UNSET))


        _processors = d.pop("processors", UNSET)
        processors: list[ProcessorMetrics] | Unset = UNSET
        if _processors is not UNSET:
            processors = []
            for processors_item_data in _processors:
                processors_item = ProcessorMetrics.from_dict(processors_item_data)



                processors.append(processors_item)


        queue_capacity = d.pop("queue_capacity", UNSET)

        queue_size = d.pop("queue_size", UNSET)

        _received_by_ordinal = d.pop("received_by_ordinal", UNSET)
        received_by_ordinal: VertexMetricsReceivedByOrdinal | Unset
        if isinstance(_received_by_ordinal,  Unset):
            received_by_ordinal = UNSET
        else:
            received_by_ordinal = VertexMetricsReceivedByOrdinal.from_dict(_received_by_ordinal)




        def _parse_top_observed_wm(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        top_observed_wm = _parse_top_observed_wm(d.pop("top_observed_wm", UNSET))


        vertex_metrics = cls(
            backpressure_level=backpressure_level,
            backpressure_ratio=backpressure_ratio,
            bottleneck=bottleneck,
            busy_ratio=busy_ratio,
            coalesced_wm=coalesced_wm,
            emitted_by_ordinal=emitted_by_ordinal,
            event_time_gap_ms=event_time_gap_ms,
            event_time_per_s=event_time_per_s,
            idle=idle,
            input_rate_per_s=input_rate_per_s,
            items_in=items_in,
            items_out=items_out,
            items_out_per_s=items_out_per_s,
            lag_ms=lag_ms,
            last_forwarded_wm=last_forwarded_wm,
            late_items_dropped=late_items_dropped,
            processing_rate_per_s=processing_rate_per_s,
            processors=processors,
            queue_capacity=queue_capacity,
            queue_size=queue_size,
            received_by_ordinal=received_by_ordinal,
            top_observed_wm=top_observed_wm,
        )


        vertex_metrics.additional_properties = d
        return vertex_metrics

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
