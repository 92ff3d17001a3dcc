from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DagVertexView")



@_attrs_define
class DagVertexView:
    """ 
        Attributes:
            local_parallelism (int):
            name (str):
            parallelism (int):
            processor (str):
            stage (int):
     """

    local_parallelism: int
    name: str
    parallelism: int
    processor: str
    stage: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        local_parallelism = self.local_parallelism

        name = self.name

        parallelism = self.parallelism

        processor = self.processor

        stage = self.stage


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "local_parallelism": local_parallelism,
            "name": name,
            "parallelism": parallelism,
            "processor": processor,
            "stage": stage,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        local_parallelism = d.pop("local_parallelism")

        name = d.pop("name")

        parallelism = d.pop("parallelism")

        processor = d.pop("processor")

        stage = d.pop("stage")

        dag_vertex_view = cls(
            local_parallelism=local_parallelism,
            name=name,
            parallelism=parallelism,
            processor=processor,
            stage=stage,
        )


        dag_vertex_view.additional_properties = d
        return dag_vertex_view

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
