from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.edge_spec import EdgeSpec
  from ..models.vertex_spec import VertexSpec





T = TypeVar("T", bound="DagSpec")



@_attrs_define
class DagSpec:
    """ 
        Attributes:
            vertices (list[VertexSpec]):
            edges (list[EdgeSpec] | Unset):
     """

    vertices: list[VertexSpec]
    edges: list[EdgeSpec] | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.edge_spec import EdgeSpec # noqa: PLC0415
        from ..models.vertex_spec import VertexSpec # noqa: PLC0415
        vertices = []
        for vertices_item_data in self.vertices:
            vertices_item = vertices_item_data.to_dict()
            vertices.append(vertices_item)



        edges: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.edges, Unset):
            edges = []
            for edges_item_data in self.edges:
                edges_item = edges_item_data.to_dict()
                edges.append(edges_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "vertices": vertices,
        })
        if edges is not UNSET:
            field_dict["edges"] = edges

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.edge_spec import EdgeSpec # noqa: PLC0415
        from ..models.vertex_spec import VertexSpec # noqa: PLC0415
        d = dict(src_dict)
        vertices = []
        _vertices = d.pop("vertices")
        for vertices_item_data in (_vertices):
            vertices_item = VertexSpec.from_dict(vertices_item_data)



            vertices.append(vertices_item)


        _edges = d.pop("edges", UNSET)
        edges: list[EdgeSpec] | Unset = UNSET
        if _edges is not UNSET:
            edges = []
            for edges_item_data in _edges:
                edges_item = EdgeSpec.from_dict(edges_item_data)



                edges.append(edges_item)


        dag_spec = cls(
            vertices=vertices,
            edges=edges,
        )

        return dag_spec

