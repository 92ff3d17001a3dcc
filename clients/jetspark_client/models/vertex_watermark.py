from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.backpressure_level import BackpressureLevel
from typing import cast

if TYPE_CHECKING:
  from ..models.holder import Holder
  from ..models.idle_input import IdleInput
  from ..models.processor_watermark import ProcessorWatermark





T = TypeVar("T", bound="VertexWatermark")



@_attrs_define
class VertexWatermark:
    """ 
        Attributes:
            backpressure_level (BackpressureLevel): SPEC §6: ok < 0.1 <= low < 0.5 <= high.
            backpressure_ratio (float):
            coalesced_wm (int | None):
            held_back_by (Holder | IdleInput | None): null for a source, or when nothing upstream reported
            idle_inputs (list[IdleInput]):
            lag_ms (int | None): now minus coalesced_wm; null when event time is more than a day from now
            processors (list[ProcessorWatermark]):
            queue_capacity (int):
            queue_fill (float | None): queue_size / queue_capacity
            queue_size (int):
            skew_ms (int | None): max - min of the upstream forwarded watermarks
            vertex (str):
     """

    backpressure_level: BackpressureLevel
    backpressure_ratio: float
    coalesced_wm: int | None
    held_back_by: Holder | IdleInput | None
    idle_inputs: list[IdleInput]
    lag_ms: int | None
    processors: list[ProcessorWatermark]
    queue_capacity: int
    queue_fill: float | None
    queue_size: int
    skew_ms: int | None
    vertex: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.holder import Holder # noqa: PLC0415
        from ..models.idle_input import IdleInput # noqa: PLC0415
        from ..models.processor_watermark import ProcessorWatermark # noqa: PLC0415
        backpressure_level = self.backpressure_level.value

        backpressure_ratio = self.backpressure_ratio

        coalesced_wm: int | None
        coalesced_wm = self.coalesced_wm

        held_back_by: dict[str, Any] | None
        if isinstance(self.held_back_by, Holder):
            held_back_by = self.held_back_by.to_dict()
        elif isinstance(self.held_back_by, IdleInput):
            held_back_by = self.held_back_by.to_dict()
        else:
            held_back_by = self.held_back_by

        idle_inputs = []
        for idle_inputs_item_data in self.idle_inputs:
            idle_inputs_item = idle_inputs_item_data.to_dict()
            idle_inputs.append(idle_inputs_item)



        lag_ms: int | None
        lag_ms = self.lag_ms

        processors = []
        for processors_item_data in self.processors:
            processors_item = processors_item_data.to_dict()
            processors.append(processors_item)



        queue_capacity = self.queue_capacity

        queue_fill: float | None
        queue_fill = self.queue_fill

        queue_size = self.queue_size

        skew_ms: int | None
        skew_ms = self.skew_ms

        vertex = self.vertex


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "backpressure_level": backpressure_level,
            "backpressure_ratio": backpressure_ratio,
            "coalesced_wm": coalesced_wm,
            "held_back_by": held_back_by,
            "idle_inputs": idle_inputs,
            "lag_ms": lag_ms,
            "processors": processors,
            "queue_capacity": queue_capacity,
            "queue_fill": queue_fill,
            "queue_size": queue_size,
            "skew_ms": skew_ms,
            "vertex": vertex,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.holder import Holder # noqa: PLC0415
        from ..models.idle_input import IdleInput # noqa: PLC0415
        from ..models.processor_watermark import ProcessorWatermark # noqa: PLC0415
        d = dict(src_dict)
        backpressure_level = BackpressureLevel(d.pop("backpressure_level"))




        backpressure_ratio = d.pop("backpressure_ratio")

        def _parse_coalesced_wm(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        coalesced_wm = _parse_coalesced_wm(d.pop("coalesced_wm"))


        def _parse_held_back_by(data: object) -> Holder | IdleInput | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                held_back_by_type_0 = Holder.from_dict(data)



                return held_back_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                held_back_by_type_1 = IdleInput.from_dict(data)



                return held_back_by_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Holder | IdleInput | None, data)

        held_back_by = _parse_held_back_by(d.pop("held_back_by"))


        idle_inputs = []
        _idle_inputs = d.pop("idle_inputs")
        for idle_inputs_item_data in (_idle_inputs):
            idle_inputs_item = IdleInput.from_dict(idle_inputs_item_data)



            idle_inputs.append(idle_inputs_item)


        def _parse_lag_ms(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        lag_ms = _parse_lag_ms(d.pop("lag_ms"))


        processors = []
        _processors = d.pop("processors")
        for processors_item_data in (_processors):
            processors_item = ProcessorWatermark.from_dict(processors_item_data)



            processors.append(processors_item)


        queue_capacity = d.pop("queue_capacity")

        def _parse_queue_fill(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        queue_fill = _parse_queue_fill(d.pop("queue_fill"))


        queue_size = d.pop("queue_size")

        def _parse_skew_ms(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        skew_ms = _parse_skew_ms(d.pop("skew_ms"))


        vertex = d.pop("vertex")

        vertex_watermark = cls(
            backpressure_level=backpressure_level,
            backpressure_ratio=backpressure_ratio,
            coalesced_wm=coalesced_wm,
            held_back_by=held_back_by,
            idle_inputs=idle_inputs,
            lag_ms=lag_ms,
            processors=processors,
            queue_capacity=queue_capacity,
            queue_fill=queue_fill,
            queue_size=queue_size,
            skew_ms=skew_ms,
            vertex=vertex,
        )


        vertex_watermark.additional_properties = d
        return vertex_watermark

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
