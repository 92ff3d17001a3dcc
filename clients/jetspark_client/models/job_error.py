from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.exception_link import ExceptionLink





T = TypeVar("T", bound="JobError")



@_attrs_define
class JobError:
    """ 
        Attributes:
            message (str):
            type_ (str):
            chain (list[ExceptionLink] | None | Unset):
     """

    message: str
    type_: str
    chain: list[ExceptionLink] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.exception_link import ExceptionLink # noqa: PLC0415
        message = self.message

        type_ = self.type_

        chain: list[dict[str, Any]] | None | Unset
        if isinstance(self.chain, Unset):
            chain = UNSET
        elif isinstance(self.chain, list):
            chain = []
            for chain_type_0_item_data in self.chain:
                chain_type_0_item = chain_type_0_item_data.to_dict()
                chain.append(chain_type_0_item)


        else:
            chain = self.chain


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "message": message,
            "type": type_,
        })
        if chain is not UNSET:
            field_dict["chain"] = chain

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.exception_link import ExceptionLink # noqa: PLC0415
        d = dict(src_dict)
        message = d.pop("message")

        type_ = d.pop("type")

        def _parse_chain(data: object) -> list[ExceptionLink] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                chain_type_0 = []
                _chain_type_0 = data
                for chain_type_0_item_data in (_chain_type_0):
                    chain_type_0_item = ExceptionLink.from_dict(chain_type_0_item_data)



                    chain_type_0.append(chain_type_0_item)

                return chain_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ExceptionLink] | None | Unset, data)

        chain = _parse_chain(d.pop("chain", UNSET))


        job_error = cls(
            message=message,
            type_=type_,
            chain=chain,
        )


        job_error.additional_properties = d
        return job_error

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
