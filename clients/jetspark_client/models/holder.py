from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Holder")



@_attrs_define
class Holder:
    """ The upstream processor holding a watermark back.

        Attributes:
            last_forwarded_wm (int | None):
            processor (int | None): its global index; null: the vertex as a whole
            vertex (str):
            idle (bool | Unset):  Default: False.
            member (int | None | Unset):
     """

    last_forwarded_wm: int | None
    processor: int | None
    vertex: str
    idle: bool | Unset = False
    member: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        last_forwarded_wm: int | None
        last_forwarded_wm = self.last_forwarded_wm

        processor: int | None
        processor = self.processor

        vertex = self.vertex

        idle = self.idle

        member: int | None | Unset
        if isinstance(self.member, Unset):
            member = UNSET
        else:
            member = self.member


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "last_forwarded_wm": last_forwarded_wm,
            "processor": processor,
            "vertex": vertex,
        })
        if idle is not UNSET:
            field_dict["idle"] = idle
        if member is not UNSET:
            field_dict["member"] = member

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_last_forwarded_wm(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_forwarded_wm = _parse_last_forwarded_wm(d.pop("last_forwarded_wm"))


        def _parse_processor(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        processor = _parse_processor(d.pop("processor"))


        vertex = d.pop("vertex")

        idle = d.pop("idle", UNSET)

        def _parse_member(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        member = _parse_member(d.pop("member", UNSET))


        holder = cls(
            last_forwarded_wm=last_forwarded_wm,
            processor=processor,
            vertex=vertex,
            idle=idle,
            member=member,
        )


        holder.additional_properties = d
        return holder

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
