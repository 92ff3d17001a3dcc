from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.holder import Holder
  from ..models.idle_input import IdleInput





T = TypeVar("T", bound="ProcessorWatermark")



@_attrs_define
class ProcessorWatermark:
    """ 
        Attributes:
            coalesced_wm (int | None):
            held_back_by (Holder | IdleInput | None):
            index (int):
            member (int):
     """

    coalesced_wm: int | None
    held_back_by: Holder | IdleInput | None
    index: int
    member: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.holder import Holder # noqa: PLC0415
        from ..models.idle_input import IdleInput # noqa: PLC0415
        coalesced_wm: int | None
        coalesced_wm = self.coalesced_wm

        held_back_by: dict[str, Any] | None
        if isinstance(self.held_back_by, Holder):
            held_back_by = self.held_back_by.to_dict()
        elif isinstance(self.held_back_by, IdleInput):
            held_back_by = self.held_back_by.to_dict()
        else:
            held_back_by = self.held_back_by

        index = self.index

        member = self.member


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "coalesced_wm": coalesced_wm,
            "held_back_by": held_back_by,
            "index": index,
            "member": member,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.holder import Holder # noqa: PLC0415
        from ..models.idle_input import IdleInput # noqa: PLC0415
        d = dict(src_dict)
        def _parse_coalesced_wm(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        coalesced_wm = _parse_coalesced_wm(d.pop("coalesced_wm"))


        def _parse_held_back_by(data: object) -> Holder | IdleInput | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                held_back_by_type_0 = Holder.from_dict(data)



                return held_back_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                held_back_by_type_1 = IdleInput.from_dict(data)



                return held_back_by_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Holder | IdleInput | None, data)

        held_back_by = _parse_held_back_by(d.pop("held_back_by"))


        index = d.pop("index")

        member = d.pop("member")

        processor_watermark = cls(
            coalesced_wm=coalesced_wm,
            held_back_by=held_back_by,
            index=index,
            member=member,
        )


        processor_watermark.additional_properties = d
        return processor_watermark

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
