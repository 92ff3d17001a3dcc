from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.job_metrics_vertices import JobMetricsVertices





T = TypeVar("T", bound="JobMetrics")



@_attrs_define
class JobMetrics:
    """ A job's metrics document (see the module docstring).

        Attributes:
            at_ms (int):
            job_id (UUID):
            epoch (int | None | Unset):
            final (bool | Unset):  Default: False.
            vertices (JobMetricsVertices | Unset):
     """

    at_ms: int
    job_id: UUID
    epoch: int | None | Unset = UNSET
    final: bool | Unset = False
    vertices: JobMetricsVertices | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.job_metrics_vertices import JobMetricsVertices # noqa: PLC0415
        at_ms = self.at_ms

        job_id = str(self.job_id)

        epoch: int | None | Unset
        if isinstance(self.epoch, Unset):
            epoch = UNSET
        else:
            epoch = self.epoch

        final = self.final

        vertices: dict[str, Any] | Unset = UNSET
        if not isinstance(self.vertices, Unset):
            vertices = self.vertices.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at_ms": at_ms,
            "job_id": job_id,
        })
        if epoch is not UNSET:
            field_dict["epoch"] = epoch
        if final is not UNSET:
            field_dict["final"] = final
        if vertices is not UNSET:
            field_dict["vertices"] = vertices

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_metrics_vertices import JobMetricsVertices # noqa: PLC0415
        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        job_id = UUID(d.pop("job_id"))




        def _parse_epoch(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        epoch = _parse_epoch(d.pop("epoch", UNSET))


        final = d.pop("final", UNSET)

        _vertices = d.pop("vertices", UNSET)
        vertices: JobMetricsVertices | Unset
        if isinstance(_vertices,  Unset):
            vertices = UNSET
        else:
            vertices = JobMetricsVertices.from_dict(_vertices)




        job_metrics = cls(
            at_ms=at_ms,
            job_id=job_id,
            epoch=epoch,
            final=final,
            vertices=vertices,
        )


        job_metrics.additional_properties = d
        return job_metrics

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
