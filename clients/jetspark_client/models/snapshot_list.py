from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.snapshot_attempt import SnapshotAttempt
  from ..models.snapshot_view import SnapshotView





T = TypeVar("T", bound="SnapshotList")



@_attrs_define
class SnapshotList:
    """ 
        Attributes:
            items (list[SnapshotView]):
            history (list[SnapshotAttempt] | Unset):
            next_cursor (None | str | Unset):
     """

    items: list[SnapshotView]
    history: list[SnapshotAttempt] | Unset = UNSET
    next_cursor: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.snapshot_attempt import SnapshotAttempt # noqa: PLC0415
        from ..models.snapshot_view import SnapshotView # noqa: PLC0415
        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)



        history: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.history, Unset):
            history = []
            for history_item_data in self.history:
                history_item = history_item_data.to_dict()
                history.append(history_item)



        next_cursor: None | str | Unset
        if isinstance(self.next_cursor, Unset):
            next_cursor = UNSET
        else:
            next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "items": items,
        })
        if history is not UNSET:
            field_dict["history"] = history
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.snapshot_attempt import SnapshotAttempt # noqa: PLC0415
        from ..models.snapshot_view import SnapshotView # noqa: PLC0415
        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in (_items):
            items_item = SnapshotView.from_dict(items_item_data)



            items.append(items_item)


        _history = d.pop("history", UNSET)
        history: list[SnapshotAttempt] | Unset = UNSET
        if _history is not UNSET:
            history = []
            for history_item_data in _history:
                history_item = SnapshotAttempt.from_dict(history_item_data)



                history.append(history_item)


        def _parse_next_cursor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_cursor = _parse_next_cursor(d.pop("next_cursor", UNSET))


        snapshot_list = cls(
            items=items,
            history=history,
            next_cursor=next_cursor,
        )


        snapshot_list.additional_properties = d
        return snapshot_list

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
