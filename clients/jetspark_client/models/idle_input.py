from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="IdleInput")



@_attrs_define
class IdleInput:
    """ An input whose connected upstream processors are all idle.

        Attributes:
            ordinal (int): the input's ordinal on this vertex
            processors (list[int]): the idle upstream processors
            vertex (str): the upstream vertex
            idle (bool | Unset):  Default: True.
     """

    ordinal: int
    processors: list[int]
    vertex: str
    idle: bool | Unset = True
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        ordinal = self.ordinal

        processors = self.processors



        vertex = self.vertex

        idle = self.idle


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "ordinal": ordinal,
            "processors": processors,
            "vertex": vertex,
        })
        if idle is not UNSET:
            field_dict["idle"] = idle

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ordinal = d.pop("ordinal")

        processors = cast(list[int], d.pop("processors"))


        vertex = d.pop("vertex")

        idle = d.pop("idle", UNSET)

        idle_input = cls(
            ordinal=ordinal,
            processors=processors,
            vertex=vertex,
            idle=idle,
        )


        idle_input.additional_properties = d
        return idle_input

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
