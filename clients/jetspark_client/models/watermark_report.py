from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.vertex_watermark import VertexWatermark





T = TypeVar("T", bound="WatermarkReport")



@_attrs_define
class WatermarkReport:
    """ 
        Attributes:
            at_ms (int | None): when the metrics document was produced
            job_id (UUID):
            now_ms (int):
            vertices (list[VertexWatermark]):
     """

    at_ms: int | None
    job_id: UUID
    now_ms: int
    vertices: list[VertexWatermark]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.vertex_watermark import VertexWatermark # noqa: PLC0415
        at_ms: int | None
        at_ms = self.at_ms

        job_id = str(self.job_id)

        now_ms = self.now_ms

        vertices = []
        for vertices_item_data in self.vertices:
            vertices_item = vertices_item_data.to_dict()
            vertices.append(vertices_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at_ms": at_ms,
            "job_id": job_id,
            "now_ms": now_ms,
            "vertices": vertices,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.vertex_watermark import VertexWatermark # noqa: PLC0415
        d = dict(src_dict)
        def _parse_at_ms(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        at_ms = _parse_at_ms(d.pop("at_ms"))


        job_id = UUID(d.pop("job_id"))




        now_ms = d.pop("now_ms")

        vertices = []
        _vertices = d.pop("vertices")
        for vertices_item_data in (_vertices):
            vertices_item = VertexWatermark.from_dict(vertices_item_data)



            vertices.append(vertices_item)


        watermark_report = cls(
            at_ms=at_ms,
            job_id=job_id,
            now_ms=now_ms,
            vertices=vertices,
        )


        watermark_report.additional_properties = d
        return watermark_report

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
