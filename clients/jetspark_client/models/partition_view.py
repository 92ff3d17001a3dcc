from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.partition_storage_view import PartitionStorageView





T = TypeVar("T", bound="PartitionView")



@_attrs_define
class PartitionView:
    """ 
        Attributes:
            canonical_hex (str):
            key (Any):
            partition_count (int):
            partition_id (int):
            storage (None | PartitionStorageView | Unset):
     """

    canonical_hex: str
    key: Any
    partition_count: int
    partition_id: int
    storage: None | PartitionStorageView | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.partition_storage_view import PartitionStorageView # noqa: PLC0415
        canonical_hex = self.canonical_hex

        key = self.key

        partition_count = self.partition_count

        partition_id = self.partition_id

        storage: dict[str, Any] | None | Unset
        if isinstance(self.storage, Unset):
            storage = UNSET
        elif isinstance(self.storage, PartitionStorageView):
            storage = self.storage.to_dict()
        else:
            storage = self.storage


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "canonical_hex": canonical_hex,
            "key": key,
            "partition_count": partition_count,
            "partition_id": partition_id,
        })
        if storage is not UNSET:
            field_dict["storage"] = storage

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.partition_storage_view import PartitionStorageView # noqa: PLC0415
        d = dict(src_dict)
        canonical_hex = d.pop("canonical_hex")

        key = d.pop("key")

        partition_count = d.pop("partition_count")

        partition_id = d.pop("partition_id")

        def _parse_storage(data: object) -> None | PartitionStorageView | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                storage_type_0 = PartitionStorageView.from_dict(data)



                return storage_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PartitionStorageView | Unset, data)

        storage = _parse_storage(d.pop("storage", UNSET))


        partition_view = cls(
            canonical_hex=canonical_hex,
            key=key,
            partition_count=partition_count,
            partition_id=partition_id,
            storage=storage,
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
