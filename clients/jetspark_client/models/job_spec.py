from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.dag_spec import DagSpec
  from ..models.job_config import JobConfig





T = TypeVar("T", bound="JobSpec")



@_attrs_define
class JobSpec:
    """ The body of ``POST /v1/jobs``.

        Attributes:
            dag (DagSpec):
            name (str):
            config (JobConfig | Unset):
     """

    dag: DagSpec
    name: str
    config: JobConfig | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.dag_spec import DagSpec # noqa: PLC0415
        from ..models.job_config import JobConfig # noqa: PLC0415
        dag = self.dag.to_dict()

        name = self.name

        config: dict[str, Any] | Unset = UNSET
        if not isinstance(self.config, Unset):
            config = self.config.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "dag": dag,
            "name": name,
        })
        if config is not UNSET:
            field_dict["config"] = config

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dag_spec import DagSpec # noqa: PLC0415
        from ..models.job_config import JobConfig # noqa: PLC0415
        d = dict(src_dict)
        dag = DagSpec.from_dict(d.pop("dag"))




        name = d.pop("name")

        _config = d.pop("config", UNSET)
        config: JobConfig | Unset
        if isinstance(_config,  Unset):
            config = UNSET
        else:
            config = JobConfig.from_dict(_config)




        job_spec = cls(
            dag=dag,
            name=name,
            config=config,
        )

        return job_spec

