from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.job_status import JobStatus
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.job_error import JobError
  from ..models.job_view_last_snapshot_type_0 import JobViewLastSnapshotType0
  from ..models.job_view_plan_type_0 import JobViewPlanType0
  from ..models.job_view_vertex_counts_type_0 import JobViewVertexCountsType0
  from ..models.progress import Progress
  from ..models.timings import Timings
  from ..models.under_replication import UnderReplication





T = TypeVar("T", bound="JobView")



@_attrs_define
class JobView:
    """ A job as clients see it.

        Attributes:
            attempt (int):
            created_at (datetime.datetime):
            error (JobError | None):
            finished_at (datetime.datetime | None):
            id (UUID):
            name (str):
            plan (JobViewPlanType0 | None):
            progress (Progress):
            started_at (datetime.datetime | None):
            status (JobStatus): Where a job is in its life. PostgreSQL holds the truth; Redis only announces.
            updated_at (datetime.datetime):
            version (int):
            vertex_counts (JobViewVertexCountsType0 | None):
            worker (None | str):
            last_snapshot (JobViewLastSnapshotType0 | None | Unset):
            timings (None | Timings | Unset):
            under_replicated (None | UnderReplication | Unset):
     """

    attempt: int
    created_at: datetime.datetime
    error: JobError | None
    finished_at: datetime.datetime | None
    id: UUID
    name: str
    plan: JobViewPlanType0 | None
    progress: Progress
    started_at: datetime.datetime | None
    status: JobStatus
    updated_at: datetime.datetime
    version: int
    vertex_counts: JobViewVertexCountsType0 | None
    worker: None | str
    last_snapshot: JobViewLastSnapshotType0 | None | Unset = UNSET
    timings: None | Timings | Unset = UNSET
    under_replicated: None | UnderReplication | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.job_error import JobError # noqa: PLC0415
        from ..models.job_view_last_snapshot_type_0 import JobViewLastSnapshotType0 # noqa: PLC0415
        from ..models.job_view_plan_type_0 import JobViewPlanType0 # noqa: PLC0415
        from ..models.job_view_vertex_counts_type_0 import JobViewVertexCountsType0 # noqa: PLC0415
        from ..models.progress import Progress # noqa: PLC0415
        from ..models.timings import Timings # noqa: PLC0415
        from ..models.under_replication import UnderReplication # noqa: PLC0415
        attempt = self.attempt

        created_at = self.created_at.isoformat()

        error: dict[str, Any] | None
        if isinstance(self.error, JobError):
            error = self.error.to_dict()
        else:
            error = self.error

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        id = str(self.id)

        name = self.name

        plan: dict[str, Any] | None
        if isinstance(self.plan, JobViewPlanType0):
            plan = self.plan.to_dict()
        else:
            plan = self.plan

        progress = self.progress.to_dict()

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        status = self.status.value

        updated_at = self.updated_at.isoformat()

        version = self.version

        vertex_counts: dict[str, Any] | None
        if isinstance(self.vertex_counts, JobViewVertexCountsType0):
            vertex_counts = self.vertex_counts.to_dict()
        else:
            vertex_counts = self.vertex_counts

        worker: None | str
        worker = self.worker

        last_snapshot: dict[str, Any] | None | Unset
        if isinstance(self.last_snapshot, Unset):
            last_snapshot = UNSET
        elif isinstance(self.last_snapshot, JobViewLastSnapshotType0):
            last_snapshot = self.last_snapshot.to_dict()
        else:
            last_snapshot = self.last_snapshot

        timings: dict[str, Any] | None | Unset
        if isinstance(self.timings, Unset):
            timings = UNSET
        elif isinstance(self.timings, Timings):
            timings = self.timings.to_dict()
        else:
            timings = self.timings

        under_replicated: dict[str, Any] | None | Unset
        if isinstance(self.under_replicated, Unset):
            under_replicated = UNSET
        elif isinstance(self.under_replicated, UnderReplication):
            under_replicated = self.under_replicated.to_dict()
        else:
            under_replicated = self.under_replicated


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attempt": attempt,
            "created_at": created_at,
            "error": error,
            "finished_at": finished_at,
            "id": id,
            "name": name,
            "plan": plan,
            "progress": progress,
            "started_at": started_at,
            "status": status,
            "updated_at": updated_at,
            "version": version,
            "vertex_counts": vertex_counts,
            "worker": worker,
        })
        if last_snapshot is not UNSET:
            field_dict["last_snapshot"] = last_snapshot
        if timings is not UNSET:
            field_dict["timings"] = timings
        if under_replicated is not UNSET:
            field_dict["under_replicated"] = under_replicated

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_error import JobError # noqa: PLC0415
        from ..models.job_view_last_snapshot_type_0 import JobViewLastSnapshotType0 # noqa: PLC0415
        from ..models.job_view_plan_type_0 import JobViewPlanType0 # noqa: PLC0415
        from ..models.job_view_vertex_counts_type_0 import JobViewVertexCountsType0 # noqa: PLC0415
        from ..models.progress import Progress # noqa: PLC0415
        from ..models.timings import Timings # noqa: PLC0415
        from ..models.under_replication import UnderReplication # noqa: PLC0415
        d = dict(src_dict)
        attempt = d.pop("attempt")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        def _parse_error(data: object) -> JobError | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = JobError.from_dict(data)



                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobError | None, data)

        error = _parse_error(d.pop("error"))


        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)



                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))


        id = UUID(d.pop("id"))




        name = d.pop("name")

        def _parse_plan(data: object) -> JobViewPlanType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                plan_type_0 = JobViewPlanType0.from_dict(data)



                return plan_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobViewPlanType0 | None, data)

        plan = _parse_plan(d.pop("plan"))


        progress = Progress.from_dict(d.pop("progress"))




        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)



                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))


        status = JobStatus(d.pop("status"))




        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        version = d.pop("version")

        def _parse_vertex_counts(data: object) -> JobViewVertexCountsType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                vertex_counts_type_0 = JobViewVertexCountsType0.from_dict(data)



                return vertex_counts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobViewVertexCountsType0 | None, data)

        vertex_counts = _parse_vertex_counts(d.pop("vertex_counts"))


        def _parse_worker(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        worker = _parse_worker(d.pop("worker"))


        def _parse_last_snapshot(data: object) -> JobViewLastSnapshotType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_snapshot_type_0 = JobViewLastSnapshotType0.from_dict(data)



                return last_snapshot_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobViewLastSnapshotType0 | None | Unset, data)

        last_snapshot = _parse_last_snapshot(d.pop("last_snapshot", UNSET))


        def _parse_timings(data: object) -> None | Timings | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                timings_type_0 = Timings.from_dict(data)



                return timings_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Timings | Unset, data)

        timings = _parse_timings(d.pop("timings", UNSET))


        def _parse_under_replicated(data: object) -> None | UnderReplication | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                under_replicated_type_0 = UnderReplication.from_dict(data)



                return under_replicated_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UnderReplication | Unset, data)

        under_replicated = _parse_under_replicated(d.pop("under_replicated", UNSET))


        job_view = cls(
            attempt=attempt,
            created_at=created_at,
            error=error,
            finished_at=finished_at,
            id=id,
            name=name,
            plan=plan,
            progress=progress,
            started_at=started_at,
            status=status,
            updated_at=updated_at,
            version=version,
            vertex_counts=vertex_counts,
            worker=worker,
            last_snapshot=last_snapshot,
            timings=timings,
            under_replicated=under_replicated,
        )


        job_view.additional_properties = d
        return job_view

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
