from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.routing import Routing
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.edge_config import EdgeConfig





T = TypeVar("T", bound="EdgeSpec")



@_attrs_define
class EdgeSpec:
    """ 
        Attributes:
            from_ (str):
            to (str):
            buffered (bool | Unset):  Default: False.
            config (EdgeConfig | Unset): Jet's fine-tuning options of an edge.
            distributed (bool | Unset):  Default: False.
            from_ordinal (int | Unset):  Default: 0.
            key (None | str | Unset):
            partitioner (str | Unset):  Default: 'murmur3'.
            priority (int | Unset):  Default: 0.
            routing (Routing | Unset):
            to_ordinal (int | Unset):  Default: 0.
     """

    from_: str
    to: str
    buffered: bool | Unset = False
    config: EdgeConfig | Unset = UNSET
    distributed: bool | Unset = False
    from_ordinal: int | Unset = 0
    key: None | str | Unset = UNSET
    partitioner: str | Unset = 'murmur3'
    priority: int | Unset = 0
    routing: Routing | Unset = UNSET
    to_ordinal: int | Unset = 0





    def to_dict(self) -> dict[str, Any]:
        from ..models.edge_config import EdgeConfig # noqa: PLC0415
        from_ = self.from_

        to = self.to

        buffered = self.buffered

        config: dict[str, Any] | Unset = UNSET
        if not isinstance(self.config, Unset):
            config = self.config.to_dict()

        distributed = self.distributed

        from_ordinal = self.from_ordinal

        key: None | str | Unset
        if isinstance(self.key, Unset):
            key = UNSET
        else:
            key = self.key

        partitioner = self.partitioner

        priority = self.priority

        routing: str | Unset = UNSET
        if not isinstance(self.routing, Unset):
            routing = self.routing.value


        to_ordinal = self.to_ordinal


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "from": from_,
            "to": to,
        })
        if buffered is not UNSET:
            field_dict["buffered"] = buffered
        if config is not UNSET:
            field_dict["config"] = config
        if distributed is not UNSET:
            field_dict["distributed"] = distributed
        if from_ordinal is not UNSET:
            field_dict["from_ordinal"] = from_ordinal
        if key is not UNSET:
            field_dict["key"] = key
        if partitioner is not UNSET:
            field_dict["partitioner"] = partitioner
        if priority is not UNSET:
            field_dict["priority"] = priority
        if routing is not UNSET:
            field_dict["routing"] = routing
        if to_ordinal is not UNSET:
            field_dict["to_ordinal"] = to_ordinal

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.edge_config import EdgeConfig # noqa: PLC0415
        d = dict(src_dict)
        from_ = d.pop("from")

        to = d.pop("to")

        buffered = d.pop("buffered", UNSET)

        _config = d.pop("config", UNSET)
        config: EdgeConfig | Unset
        if isinstance(_config,  Unset):
            config = UNSET
        else:
            config = EdgeConfig.from_dict(_config)




        distributed = d.pop("distributed", UNSET)

        from_ordinal = d.pop("from_ordinal", UNSET)

        def _parse_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        key = _parse_key(d.pop("key", UNSET))


        partitioner = d.pop("partitioner", UNSET)

        priority = d.pop("priority", UNSET)

        _routing = d.pop("routing", UNSET)
        routing: Routing | Unset
        if isinstance(_routing,  Unset):
            routing = UNSET
        else:
            routing = Routing(_routing)




        to_ordinal = d.pop("to_ordinal", UNSET)

        edge_spec = cls(
            from_=from_,
            to=to,
            buffered=buffered,
            config=config,
            distributed=distributed,
            from_ordinal=from_ordinal,
            key=key,
            partitioner=partitioner,
            priority=priority,
            routing=routing,
            to_ordinal=to_ordinal,
        )

        return edge_spec

