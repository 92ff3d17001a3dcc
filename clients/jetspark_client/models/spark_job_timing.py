from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="SparkJobTiming")



@_attrs_define
class SparkJobTiming:
    """ One Spark job a jetspark job ran.

        Attributes:
            id (int):
            stages (list[int]):
            submitted (datetime.datetime | None):
            status (None | str | Unset):
     """

    id: int
    stages: list[int]
    submitted: datetime.datetime | None
    status: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        stages = self.stages



        submitted: None | str
        if isinstance(self.submitted, datetime.datetime):
            submitted = self.submitted.isoformat()
        else:
            submitted = self.submitted

        status: None | str | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        else:
            status = self.status


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "id": id,
            "stages": stages,
            "submitted": submitted,
        })
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        stages = cast(list[int], d.pop("stages"))


        def _parse_submitted(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                submitted_type_0 = datetime.datetime.fromisoformat(data)



                return submitted_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        submitted = _parse_submitted(d.pop("submitted"))


        def _parse_status(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        status = _parse_status(d.pop("status", UNSET))


        spark_job_timing = cls(
            id=id,
            stages=stages,
            submitted=submitted,
            status=status,
        )


        spark_job_timing.additional_properties = d
        return spark_job_timing

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
