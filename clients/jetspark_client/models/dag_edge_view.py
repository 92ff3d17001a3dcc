from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="DagEdgeView")



@_attrs_define
class DagEdgeView:
    """ 
        Attributes:
            buffered (bool):
            distributed (bool):
            exchange (str):
            from_ (str):
            from_ordinal (int):
            key (None | str):
            label (str):
            priority (int):
            routing (str):
            to (str):
            to_ordinal (int):
     """

    buffered: bool
    distributed: bool
    exchange: str
    from_: str
    from_ordinal: int
    key: None | str
    label: str
    priority: int
    routing: str
    to: str
    to_ordinal: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        buffered = self.buffered

        distributed = self.distributed

        exchange = self.exchange

        from_ = self.from_

        from_ordinal = self.from_ordinal

        key: None | str
        key = self.key

        label = self.label

        priority = self.priority

        routing = self.routing

        to = self.to

        to_ordinal = self.to_ordinal


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "buffered": buffered,
            "distributed": distributed,
            "exchange": exchange,
            "from": from_,
            "from_ordinal": from_ordinal,
            "key": key,
            "label": label,
            "priority": priority,
            "routing": routing,
            "to": to,
            "to_ordinal": to_ordinal,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        buffered = d.pop("buffered")

        distributed = d.pop("distributed")

        exchange = d.pop("exchange")

        from_ = d.pop("from")

        from_ordinal = d.pop("from_ordinal")

        def _parse_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        key = _parse_key(d.pop("key"))


        label = d.pop("label")

        priority = d.pop("priority")

        routing = d.pop("routing")

        to = d.pop("to")

        to_ordinal = d.pop("to_ordinal")

        dag_edge_view = cls(
            buffered=buffered,
            distributed=distributed,
            exchange=exchange,
            from_=from_,
            from_ordinal=from_ordinal,
            key=key,
            label=label,
            priority=priority,
            routing=routing,
            to=to,
            to_ordinal=to_ordinal,
        )


        dag_edge_view.additional_properties = d
        return dag_edge_view

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
