from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.snapshot_view_vertices import SnapshotViewVertices





T = TypeVar("T", bound="SnapshotView")



@_attrs_define
class SnapshotView:
    """ A committed snapshot: its state lives in Redis, its metadata in PostgreSQL.

        Attributes:
            committed_at (datetime.datetime | None):
            created_at (datetime.datetime | None):
            epoch (int):
            name (None | str):
            snapshot_id (int):
            vertices (SnapshotViewVertices):
            bytes_ (int | Unset):  Default: 0.
     """

    committed_at: datetime.datetime | None
    created_at: datetime.datetime | None
    epoch: int
    name: None | str
    snapshot_id: int
    vertices: SnapshotViewVertices
    bytes_: int | Unset = 0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.snapshot_view_vertices import SnapshotViewVertices # noqa: PLC0415
        committed_at: None | str
        if isinstance(self.committed_at, datetime.datetime):
            committed_at = self.committed_at.isoformat()
        else:
            committed_at = self.committed_at

        created_at: None | str
        if isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        epoch = self.epoch

        name: None | str
        name = self.name

        snapshot_id = self.snapshot_id

        vertices = self.vertices.to_dict()

        bytes_ = self.bytes_


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "committed_at": committed_at,
            "created_at": created_at,
            "epoch": epoch,
            "name": name,
            "snapshot_id": snapshot_id,
            "vertices": vertices,
        })
        if bytes_ is not UNSET:
            field_dict["bytes"] = bytes_

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.snapshot_view_vertices import SnapshotViewVertices # noqa: PLC0415
        d = dict(src_dict)
        def _parse_committed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                committed_at_type_0 = datetime.datetime.fromisoformat(data)



                return committed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        committed_at = _parse_committed_at(d.pop("committed_at"))


        def _parse_created_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_at_type_0 = datetime.datetime.fromisoformat(data)



                return created_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        created_at = _parse_created_at(d.pop("created_at"))


        epoch = d.pop("epoch")

        def _parse_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        name = _parse_name(d.pop("name"))


        snapshot_id = d.pop("snapshot_id")

        vertices = SnapshotViewVertices.from_dict(d.pop("vertices"))




        bytes_ = d.pop("bytes", UNSET)

        snapshot_view = cls(
            committed_at=committed_at,
            created_at=created_at,
            epoch=epoch,
            name=name,
            snapshot_id=snapshot_id,
            vertices=vertices,
            bytes_=bytes_,
        )


        snapshot_view.additional_properties = d
        return snapshot_view

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
