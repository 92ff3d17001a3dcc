from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="PartitionView")



@_attrs_define
class PartitionView:
    """ 
        Attributes:
            canonical_hex (str):
            key (Any):
            partition_count (int):
            partition_id (int):
     """

    canonical_hex: str
    key: Any
    partition_count: int
    partition_id: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        canonical_hex = self.canonical_hex

        key = self.key

        partition_count = self.partition_count

        partition_id = self.partition_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "canonical_hex": canonical_hex,
            "key": key,
            "partition_count": partition_count,
            "partition_id": partition_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        canonical_hex = d.pop("canonical_hex")

        key = d.pop("key")

        partition_count = d.pop("partition_count")

        partition_id = d.pop("partition_id")

        partition_view = cls(
            canonical_hex=canonical_hex,
            key=key,
            partition_count=partition_count,
            partition_id=partition_id,
        )


        partition_view.additional_properties = d
        return partition_view

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
