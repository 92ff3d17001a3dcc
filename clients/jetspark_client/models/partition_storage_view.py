from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.store_node_view import StoreNodeView





T = TypeVar("T", bound="PartitionStorageView")



@_attrs_define
class PartitionStorageView:
    """ Where the partition's snapshot state lives (the seeds' partition table): its keys'
    hash tag, and on a Redis Cluster the tag's slot and the nodes serving it now.

        Attributes:
            cluster (bool):
            hash_tag (str):
            primary (None | StoreNodeView | Unset):
            replicas (list[StoreNodeView] | Unset):
            slot (int | None | Unset):
     """

    cluster: bool
    hash_tag: str
    primary: None | StoreNodeView | Unset = UNSET
    replicas: list[StoreNodeView] | Unset = UNSET
    slot: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.store_node_view import StoreNodeView # noqa: PLC0415
        cluster = self.cluster

        hash_tag = self.hash_tag

        primary: dict[str, Any] | None | Unset
        if isinstance(self.primary, Unset):
            primary = UNSET
        elif isinstance(self.primary, StoreNodeView):
            primary = self.primary.to_dict()
        else:
            primary = self.primary

        replicas: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.replicas, Unset):
            replicas = []
            for replicas_item_data in self.replicas:
                replicas_item = replicas_item_data.to_dict()
                replicas.append(replicas_item)



        slot: int | None | Unset
        if isinstance(self.slot, Unset):
            slot = UNSET
        else:
            slot = self.slot


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "cluster": cluster,
            "hash_tag": hash_tag,
        })
        if primary is not UNSET:
            field_dict["primary"] = primary
        if replicas is not UNSET:
            field_dict["replicas"] = replicas
        if slot is not UNSET:
            field_dict["slot"] = slot

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.store_node_view import StoreNodeView # noqa: PLC0415
        d = dict(src_dict)
        cluster = d.pop("cluster")

        hash_tag = d.pop("hash_tag")

        def _parse_primary(data: object) -> None | StoreNodeView | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                primary_type_0 = StoreNodeView.from_dict(data)



                return primary_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StoreNodeView | Unset, data)

        primary = _parse_primary(d.pop("primary", UNSET))


        _replicas = d.pop("replicas", UNSET)
        replicas: list[StoreNodeView] | Unset = UNSET
        if _replicas is not UNSET:
            replicas = []
            for replicas_item_data in _replicas:
                replicas_item = StoreNodeView.from_dict(replicas_item_data)



                replicas.append(replicas_item)


        def _parse_slot(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        slot = _parse_slot(d.pop("slot", UNSET))


        partition_storage_view = cls(
            cluster=cluster,
            hash_tag=hash_tag,
            primary=primary,
            replicas=replicas,
            slot=slot,
        )


        partition_storage_view.additional_properties = d
        return partition_storage_view

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
