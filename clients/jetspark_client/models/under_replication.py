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
  from ..models.under_replication_short import UnderReplicationShort





T = TypeVar("T", bound="UnderReplication")



@_attrs_define
class UnderReplication:
    """ The job's last snapshot has fewer backups than ``config.backup_count``: a Redis node
    that held them is lost. The job goes on; the next snapshot after replicas are back has
    them all again, and this is cleared.

        Attributes:
            backup_count (int):
            replicas (int):
            since (datetime.datetime | None):
            short (UnderReplicationShort | Unset):
     """

    backup_count: int
    replicas: int
    since: datetime.datetime | None
    short: UnderReplicationShort | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.under_replication_short import UnderReplicationShort # noqa: PLC0415
        backup_count = self.backup_count

        replicas = self.replicas

        since: None | str
        if isinstance(self.since, datetime.datetime):
            since = self.since.isoformat()
        else:
            since = self.since

        short: dict[str, Any] | Unset = UNSET
        if not isinstance(self.short, Unset):
            short = self.short.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "backup_count": backup_count,
            "replicas": replicas,
            "since": since,
        })
        if short is not UNSET:
            field_dict["short"] = short

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.under_replication_short import UnderReplicationShort # noqa: PLC0415
        d = dict(src_dict)
        backup_count = d.pop("backup_count")

        replicas = d.pop("replicas")

        def _parse_since(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                since_type_0 = datetime.datetime.fromisoformat(data)



                return since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        since = _parse_since(d.pop("since"))


        _short = d.pop("short", UNSET)
        short: UnderReplicationShort | Unset
        if isinstance(_short,  Unset):
            short = UNSET
        else:
            short = UnderReplicationShort.from_dict(_short)




        under_replication = cls(
            backup_count=backup_count,
            replicas=replicas,
            since=since,
            short=short,
        )


        under_replication.additional_properties = d
        return under_replication

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
