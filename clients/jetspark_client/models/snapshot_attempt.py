from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.snapshot_attempt_state import SnapshotAttemptState
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.snapshot_attempt_vertices import SnapshotAttemptVertices





T = TypeVar("T", bound="SnapshotAttempt")



@_attrs_define
class SnapshotAttempt:
    """ One snapshot of the job's history: committed, failed, abandoned or in progress.

        Attributes:
            attempt (int):
            backup_count (int):
            bytes_ (int):
            duration_ms (float | None):
            ended_at (datetime.datetime | None):
            epoch (int):
            reason (None | str):
            replicas (int | None):
            rows (int):
            snapshot_id (int):
            started_at (datetime.datetime):
            state (SnapshotAttemptState):
            under_replicated (bool):
            vertices (SnapshotAttemptVertices):
            write_ms (float | None):
            written_at (datetime.datetime | None):
     """

    attempt: int
    backup_count: int
    bytes_: int
    duration_ms: float | None
    ended_at: datetime.datetime | None
    epoch: int
    reason: None | str
    replicas: int | None
    rows: int
    snapshot_id: int
    started_at: datetime.datetime
    state: SnapshotAttemptState
    under_replicated: bool
    vertices: SnapshotAttemptVertices
    write_ms: float | None
    written_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.snapshot_attempt_vertices import SnapshotAttemptVertices # noqa: PLC0415
        attempt = self.attempt

        backup_count = self.backup_count

        bytes_ = self.bytes_

        duration_ms: float | None
        duration_ms = self.duration_ms

        ended_at: None | str
        if isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        epoch = self.epoch

        reason: None | str
        reason = self.reason

        replicas: int | None
        replicas = self.replicas

        rows = self.rows

        snapshot_id = self.snapshot_id

        started_at = self.started_at.isoformat()

        state = self.state.value

        under_replicated = self.under_replicated

        vertices = self.vertices.to_dict()

        write_ms: float | None
        write_ms = self.write_ms

        written_at: None | str
        if isinstance(self.written_at, datetime.datetime):
            written_at = self.written_at.isoformat()
        else:
            written_at = self.written_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attempt": attempt,
            "backup_count": backup_count,
            "bytes": bytes_,
            "duration_ms": duration_ms,
            "ended_at": ended_at,
            "epoch": epoch,
            "reason": reason,
            "replicas": replicas,
            "rows": rows,
            "snapshot_id": snapshot_id,
            "started_at": started_at,
            "state": state,
            "under_replicated": under_replicated,
            "vertices": vertices,
            "write_ms": write_ms,
            "written_at": written_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.snapshot_attempt_vertices import SnapshotAttemptVertices # noqa: PLC0415
        d = dict(src_dict)
        attempt = d.pop("attempt")

        backup_count = d.pop("backup_count")

        bytes_ = d.pop("bytes")

        def _parse_duration_ms(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        duration_ms = _parse_duration_ms(d.pop("duration_ms"))


        def _parse_ended_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)



                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        ended_at = _parse_ended_at(d.pop("ended_at"))


        epoch = d.pop("epoch")

        def _parse_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        reason = _parse_reason(d.pop("reason"))


        def _parse_replicas(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        replicas = _parse_replicas(d.pop("replicas"))


        rows = d.pop("rows")

        snapshot_id = d.pop("snapshot_id")

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))




        state = SnapshotAttemptState(d.pop("state"))




        under_replicated = d.pop("under_replicated")

        vertices = SnapshotAttemptVertices.from_dict(d.pop("vertices"))




        def _parse_write_ms(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        write_ms = _parse_write_ms(d.pop("write_ms"))


        def _parse_written_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                written_at_type_0 = datetime.datetime.fromisoformat(data)



                return written_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        written_at = _parse_written_at(d.pop("written_at"))


        snapshot_attempt = cls(
            attempt=attempt,
            backup_count=backup_count,
            bytes_=bytes_,
            duration_ms=duration_ms,
            ended_at=ended_at,
            epoch=epoch,
            reason=reason,
            replicas=replicas,
            rows=rows,
            snapshot_id=snapshot_id,
            started_at=started_at,
            state=state,
            under_replicated=under_replicated,
            vertices=vertices,
            write_ms=write_ms,
            written_at=written_at,
        )


        snapshot_attempt.additional_properties = d
        return snapshot_attempt

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
