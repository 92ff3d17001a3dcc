from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.processing_guarantee import ProcessingGuarantee
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="JobConfig")



@_attrs_define
class JobConfig:
    """ 
        Attributes:
            backup_count (int | Unset):  Default: 0.
            epoch_interval_ms (int | None | Unset):
            initial_snapshot (None | str | Unset):
            local_parallelism (int | None | Unset):
            max_processor_accumulated_records (int | None | Unset):
            members (int | None | Unset):
            notify (list[str] | Unset):
            partition_count (int | Unset):  Default: 271.
            processing_guarantee (ProcessingGuarantee | Unset):
            require_backups (bool | Unset):  Default: False.
            snapshot_interval_ms (int | Unset):  Default: 10000.
            timeout_s (float | None | Unset):
     """

    backup_count: int | Unset = 0
    epoch_interval_ms: int | None | Unset = UNSET
    initial_snapshot: None | str | Unset = UNSET
    local_parallelism: int | None | Unset = UNSET
    max_processor_accumulated_records: int | None | Unset = UNSET
    members: int | None | Unset = UNSET
    notify: list[str] | Unset = UNSET
    partition_count: int | Unset = 271
    processing_guarantee: ProcessingGuarantee | Unset = UNSET
    require_backups: bool | Unset = False
    snapshot_interval_ms: int | Unset = 10000
    timeout_s: float | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        backup_count = self.backup_count

        epoch_interval_ms: int | None | Unset
        if isinstance(self.epoch_interval_ms, Unset):
            epoch_interval_ms = UNSET
        else:
            epoch_interval_ms = self.epoch_interval_ms

        initial_snapshot: None | str | Unset
        if isinstance(self.initial_snapshot, Unset):
            initial_snapshot = UNSET
        else:
            initial_snapshot = self.initial_snapshot

        local_parallelism: int | None | Unset
        if isinstance(self.local_parallelism, Unset):
            local_parallelism = UNSET
        else:
            local_parallelism = self.local_parallelism

        max_processor_accumulated_records: int | None | Unset
        if isinstance(self.max_processor_accumulated_records, Unset):
            max_processor_accumulated_records = UNSET
        else:
            max_processor_accumulated_records = self.max_processor_accumulated_records

        members: int | None | Unset
        if isinstance(self.members, Unset):
            members = UNSET
        else:
            members = self.members

        notify: list[str] | Unset = UNSET
        if not isinstance(self.notify, Unset):
            notify = self.notify



        partition_count = self.partition_count

        processing_guarantee: str | Unset = UNSET
        if not isinstance(self.processing_guarantee, Unset):
            processing_guarantee = self.processing_guarantee.value


        require_backups = self.require_backups

        snapshot_interval_ms = self.snapshot_interval_ms

        timeout_s: float | None | Unset
        if isinstance(self.timeout_s, Unset):
            timeout_s = UNSET
        else:
            timeout_s = self.timeout_s


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if backup_count is not UNSET:
            field_dict["backup_count"] = backup_count
        if epoch_interval_ms is not UNSET:
            field_dict["epoch_interval_ms"] = epoch_interval_ms
        if initial_snapshot is not UNSET:
            field_dict["initial_snapshot"] = initial_snapshot
        if local_parallelism is not UNSET:
            field_dict["local_parallelism"] = local_parallelism
        if max_processor_accumulated_records is not UNSET:
            field_dict["max_processor_accumulated_records"] = max_processor_accumulated_records
        if members is not UNSET:
            field_dict["members"] = members
        if notify is not UNSET:
            field_dict["notify"] = notify
        if partition_count is not UNSET:
            field_dict["partition_count"] = partition_count
        if processing_guarantee is not UNSET:
            field_dict["processing_guarantee"] = processing_guarantee
        if require_backups is not UNSET:
            field_dict["require_backups"] = require_backups
        if snapshot_interval_ms is not UNSET:
            field_dict["snapshot_interval_ms"] = snapshot_interval_ms
        if timeout_s is not UNSET:
            field_dict["timeout_s"] = timeout_s

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        backup_count = d.pop("backup_count", UNSET)

        def _parse_epoch_interval_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        epoch_interval_ms = _parse_epoch_interval_ms(d.pop("epoch_interval_ms", UNSET))


        def _parse_initial_snapshot(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        initial_snapshot = _parse_initial_snapshot(d.pop("initial_snapshot", UNSET))


        def _parse_local_parallelism(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        local_parallelism = _parse_local_parallelism(d.pop("local_parallelism", UNSET))


        def _parse_max_processor_accumulated_records(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_processor_accumulated_records = _parse_max_processor_accumulated_records(d.pop("max_processor_accumulated_records", UNSET))


        def _parse_members(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        members = _parse_members(d.pop("members", UNSET))


        notify = cast(list[str], d.pop("notify", UNSET))


        partition_count = d.pop("partition_count", UNSET)

        _processing_guarantee = d.pop("processing_guarantee", UNSET)
        processing_guarantee: ProcessingGuarantee | Unset
        if isinstance(_processing_guarantee,  Unset):
            processing_guarantee = UNSET
        else:
            processing_guarantee = ProcessingGuarantee(_processing_guarantee)




        require_backups = d.pop("require_backups", UNSET)

        snapshot_interval_ms = d.pop("snapshot_interval_ms", UNSET)

        def _parse_timeout_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        timeout_s = _parse_timeout_s(d.pop("timeout_s", UNSET))


        job_config = cls(
            backup_count=backup_count,
            epoch_interval_ms=epoch_interval_ms,
            initial_snapshot=initial_snapshot,
            local_parallelism=local_parallelism,
            max_processor_accumulated_records=max_processor_accumulated_records,
            members=members,
            notify=notify,
            partition_count=partition_count,
            processing_guarantee=processing_guarantee,
            require_backups=require_backups,
            snapshot_interval_ms=snapshot_interval_ms,
            timeout_s=timeout_s,
        )

        return job_config

