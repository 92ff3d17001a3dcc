from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.log_page_lines_item import LogPageLinesItem





T = TypeVar("T", bound="LogPage")



@_attrs_define
class LogPage:
    """ Lines ``from`` on, each ``{seq, at, level, event, fields?, exception?}``; ``exception``
    is the exception chain (type, message, traceback per cause) of a failure.

        Attributes:
            first (int):
            from_ (int):
            job_id (UUID):
            lines (list[LogPageLinesItem]):
            size (int):
            total (int):
     """

    first: int
    from_: int
    job_id: UUID
    lines: list[LogPageLinesItem]
    size: int
    total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.log_page_lines_item import LogPageLinesItem # noqa: PLC0415
        first = self.first

        from_ = self.from_

        job_id = str(self.job_id)

        lines = []
        for lines_item_data in self.lines:
            lines_item = lines_item_data.to_dict()
            lines.append(lines_item)



        size = self.size

        total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "first": first,
            "from": from_,
            "job_id": job_id,
            "lines": lines,
            "size": size,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.log_page_lines_item import LogPageLinesItem # noqa: PLC0415
        d = dict(src_dict)
        first = d.pop("first")

        from_ = d.pop("from")

        job_id = UUID(d.pop("job_id"))




        lines = []
        _lines = d.pop("lines")
        for lines_item_data in (_lines):
            lines_item = LogPageLinesItem.from_dict(lines_item_data)



            lines.append(lines_item)


        size = d.pop("size")

        total = d.pop("total")

        log_page = cls(
            first=first,
            from_=from_,
            job_id=job_id,
            lines=lines,
            size=size,
            total=total,
        )


        log_page.additional_properties = d
        return log_page

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
