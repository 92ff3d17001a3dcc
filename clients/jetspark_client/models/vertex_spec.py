from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.vertex_spec_params import VertexSpecParams





T = TypeVar("T", bound="VertexSpec")



@_attrs_define
class VertexSpec:
    """ 
        Attributes:
            name (str):
            processor (str):
            local_parallelism (int | None | Unset):
            params (VertexSpecParams | Unset):
     """

    name: str
    processor: str
    local_parallelism: int | None | Unset = UNSET
    params: VertexSpecParams | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.vertex_spec_params import VertexSpecParams # noqa: PLC0415
        name = self.name

        processor = self.processor

        local_parallelism: int | None | Unset
        if isinstance(self.local_parallelism, Unset):
            local_parallelism = UNSET
        else:
            local_parallelism = self.local_parallelism

        params: dict[str, Any] | Unset = UNSET
        if not isinstance(self.params, Unset):
            params = self.params.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "name": name,
            "processor": processor,
        })
        if local_parallelism is not UNSET:
            field_dict["local_parallelism"] = local_parallelism
        if params is not UNSET:
            field_dict["params"] = params

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.vertex_spec_params import VertexSpecParams # noqa: PLC0415
        d = dict(src_dict)
        name = d.pop("name")

        processor = d.pop("processor")

        def _parse_local_parallelism(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        local_parallelism = _parse_local_parallelism(d.pop("local_parallelism", UNSET))


        _params = d.pop("params", UNSET)
        params: VertexSpecParams | Unset
        if isinstance(_params,  Unset):
            params = UNSET
        else:
            params = VertexSpecParams.from_dict(_params)




        vertex_spec = cls(
            name=name,
            processor=processor,
            local_parallelism=local_parallelism,
            params=params,
        )

        return vertex_spec

