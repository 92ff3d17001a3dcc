from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.dag_edge_view import DagEdgeView
  from ..models.dag_vertex_view import DagVertexView





T = TypeVar("T", bound="DagView")



@_attrs_define
class DagView:
    """ A job's DAG as planned: vertices with their stage and parallelism, edges with routing.

        Attributes:
            edges (list[DagEdgeView]):
            job_id (UUID):
            members (int):
            stages (int):
            vertices (list[DagVertexView]):
     """

    edges: list[DagEdgeView]
    job_id: UUID
    members: int
    stages: int
    vertices: list[DagVertexView]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.dag_edge_view import DagEdgeView # noqa: PLC0415
        from ..models.dag_vertex_view import DagVertexView # noqa: PLC0415
        edges = []
        for edges_item_data in self.edges:
            edges_item = edges_item_data.to_dict()
            edges.append(edges_item)



        job_id = str(self.job_id)

        members = self.members

        stages = self.stages

        vertices = []
        for vertices_item_data in self.vertices:
            vertices_item = vertices_item_data.to_dict()
            vertices.append(vertices_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "edges": edges,
            "job_id": job_id,
            "members": members,
            "stages": stages,
            "vertices": vertices,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dag_edge_view import DagEdgeView # noqa: PLC0415
        from ..models.dag_vertex_view import DagVertexView # noqa: PLC0415
        d = dict(src_dict)
        edges = []
        _edges = d.pop("edges")
        for edges_item_data in (_edges):
            edges_item = DagEdgeView.from_dict(edges_item_data)



            edges.append(edges_item)


        job_id = UUID(d.pop("job_id"))




        members = d.pop("members")

        stages = d.pop("stages")

        vertices = []
        _vertices = d.pop("vertices")
        for vertices_item_data in (_vertices):
            vertices_item = DagVertexView.from_dict(vertices_item_data)



            vertices.append(vertices_item)


        dag_view = cls(
            edges=edges,
            job_id=job_id,
            members=members,
            stages=stages,
            vertices=vertices,
        )


        dag_view.additional_properties = d
        return dag_view

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
