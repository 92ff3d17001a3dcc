from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.epoch_timing import EpochTiming
  from ..models.spark_job_timing import SparkJobTiming





T = TypeVar("T", bound="Timings")



@_attrs_define
class Timings:
    """ When the last attempt went through each phase, to explain a slow run.

        Attributes:
            claimed (datetime.datetime | None | Unset):
            computed (datetime.datetime | None | Unset):
            epochs (list[EpochTiming] | Unset):
            finished (datetime.datetime | None | Unset):
            first_epoch (datetime.datetime | None | Unset):
            first_snapshot (datetime.datetime | None | Unset):
            planned (datetime.datetime | None | Unset):
            queued (datetime.datetime | None | Unset):
            restored (datetime.datetime | None | Unset):
            restoring (datetime.datetime | None | Unset):
            results_written (datetime.datetime | None | Unset):
            running (datetime.datetime | None | Unset):
            spark_application (None | str | Unset):
            spark_job_group (None | str | Unset):
            spark_jobs (list[SparkJobTiming] | Unset):
     """

    claimed: datetime.datetime | None | Unset = UNSET
    computed: datetime.datetime | None | Unset = UNSET
    epochs: list[EpochTiming] | Unset = UNSET
    finished: datetime.datetime | None | Unset = UNSET
    first_epoch: datetime.datetime | None | Unset = UNSET
    first_snapshot: datetime.datetime | None | Unset = UNSET
    planned: datetime.datetime | None | Unset = UNSET
    queued: datetime.datetime | None | Unset = UNSET
    restored: datetime.datetime | None | Unset = UNSET
    restoring: datetime.datetime | None | Unset = UNSET
    results_written: datetime.datetime | None | Unset = UNSET
    running: datetime.datetime | None | Unset = UNSET
    spark_application: None | str | Unset = UNSET
    spark_job_group: None | str | Unset = UNSET
    spark_jobs: list[SparkJobTiming] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.epoch_timing import EpochTiming # noqa: PLC0415
        from ..models.spark_job_timing import SparkJobTiming # noqa: PLC0415
        claimed: None | str | Unset
        if isinstance(self.claimed, Unset):
            claimed = UNSET
        elif isinstance(self.claimed, datetime.datetime):
            claimed = self.claimed.isoformat()
        else:
            claimed = self.claimed

        computed: None | str | Unset
        if isinstance(self.computed, Unset):
            computed = UNSET
        elif isinstance(self.computed, datetime.datetime):
            computed = self.computed.isoformat()
        else:
            computed = self.computed

        epochs: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.epochs, Unset):
            epochs = []
            for epochs_item_data in self.epochs:
                epochs_item = epochs_item_data.to_dict()
                epochs.append(epochs_item)



        finished: None | str | Unset
        if isinstance(self.finished, Unset):
            finished = UNSET
        elif isinstance(self.finished, datetime.datetime):
            finished = self.finished.isoformat()
        else:
            finished = self.finished

        first_epoch: None | str | Unset
        if isinstance(self.first_epoch, Unset):
            first_epoch = UNSET
        elif isinstance(self.first_epoch, datetime.datetime):
            first_epoch = self.first_epoch.isoformat()
        else:
            first_epoch = self.first_epoch

        first_snapshot: None | str | Unset
        if isinstance(self.first_snapshot, Unset):
            first_snapshot = UNSET
        elif isinstance(self.first_snapshot, datetime.datetime):
            first_snapshot = self.first_snapshot.isoformat()
        else:
            first_snapshot = self.first_snapshot

        planned: None | str | Unset
        if isinstance(self.planned, Unset):
            planned = UNSET
        elif isinstance(self.planned, datetime.datetime):
            planned = self.planned.isoformat()
        else:
            planned = self.planned

        queued: None | str | Unset
        if isinstance(self.queued, Unset):
            queued = UNSET
        elif isinstance(self.queued, datetime.datetime):
            queued = self.queued.isoformat()
        else:
            queued = self.queued

        restored: None | str | Unset
        if isinstance(self.restored, Unset):
            restored = UNSET
        elif isinstance(self.restored, datetime.datetime):
            restored = self.restored.isoformat()
        else:
            restored = self.restored

        restoring: None | str | Unset
        if isinstance(self.restoring, Unset):
            restoring = UNSET
        elif isinstance(self.restoring, datetime.datetime):
            restoring = self.restoring.isoformat()
        else:
            restoring = self.restoring

        results_written: None | str | Unset
        if isinstance(self.results_written, Unset):
            results_written = UNSET
        elif isinstance(self.results_written, datetime.datetime):
            results_written = self.results_written.isoformat()
        else:
            results_written = self.results_written

        running: None | str | Unset
        if isinstance(self.running, Unset):
            running = UNSET
        elif isinstance(self.running, datetime.datetime):
            running = self.running.isoformat()
        else:
            running = self.running

        spark_application: None | str | Unset
        if isinstance(self.spark_application, Unset):
            spark_application = UNSET
        else:
            spark_application = self.spark_application

        spark_job_group: None | str | Unset
        if isinstance(self.spark_job_group, Unset):
            spark_job_group = UNSET
        else:
            spark_job_group = self.spark_job_group

        spark_jobs: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.spark_jobs, Unset):
            spark_jobs = []
            for spark_jobs_item_data in self.spark_jobs:
                spark_jobs_item = spark_jobs_item_data.to_dict()
                spark_jobs.append(spark_jobs_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if claimed is not UNSET:
            field_dict["claimed"] = claimed
        if computed is not UNSET:
            field_dict["computed"] = computed
        if epochs is not UNSET:
            field_dict["epochs"] = epochs
        if finished is not UNSET:
            field_dict["finished"] = finished
        if first_epoch is not UNSET:
            field_dict["first_epoch"] = first_epoch
        if first_snapshot is not UNSET:
            field_dict["first_snapshot"] = first_snapshot
        if planned is not UNSET:
            field_dict["planned"] = planned
        if queued is not UNSET:
            field_dict["queued"] = queued
        if restored is not UNSET:
            field_dict["restored"] = restored
        if restoring is not UNSET:
            field_dict["restoring"] = restoring
        if results_written is not UNSET:
            field_dict["results_written"] = results_written
        if running is not UNSET:
            field_dict["running"] = running
        if spark_application is not UNSET:
            field_dict["spark_application"] = spark_application
        if spark_job_group is not UNSET:
            field_dict["spark_job_group"] = spark_job_group
        if spark_jobs is not UNSET:
            field_dict["spark_jobs"] = spark_jobs

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.epoch_timing import EpochTiming # noqa: PLC0415
        from ..models.spark_job_timing import SparkJobTiming # noqa: PLC0415
        d = dict(src_dict)
        def _parse_claimed(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                claimed_type_0 = datetime.datetime.fromisoformat(data)



                return claimed_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        claimed = _parse_claimed(d.pop("claimed", UNSET))


        def _parse_computed(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                computed_type_0 = datetime.datetime.fromisoformat(data)



                return computed_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        computed = _parse_computed(d.pop("computed", UNSET))


        _epochs = d.pop("epochs", UNSET)
        epochs: list[EpochTiming] | Unset = UNSET
        if _epochs is not UNSET:
            epochs = []
            for epochs_item_data in _epochs:
                epochs_item = EpochTiming.from_dict(epochs_item_data)



                epochs.append(epochs_item)


        def _parse_finished(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_type_0 = datetime.datetime.fromisoformat(data)



                return finished_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished = _parse_finished(d.pop("finished", UNSET))


        def _parse_first_epoch(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                first_epoch_type_0 = datetime.datetime.fromisoformat(data)



                return first_epoch_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        first_epoch = _parse_first_epoch(d.pop("first_epoch", UNSET))


        def _parse_first_snapshot(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                first_snapshot_type_0 = datetime.datetime.fromisoformat(data)



                return first_snapshot_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        first_snapshot = _parse_first_snapshot(d.pop("first_snapshot", UNSET))


        def _parse_planned(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                planned_type_0 = datetime.datetime.fromisoformat(data)



                return planned_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        planned = _parse_planned(d.pop("planned", UNSET))


        def _parse_queued(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                queued_type_0 = datetime.datetime.fromisoformat(data)



                return queued_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        queued = _parse_queued(d.pop("queued", UNSET))


        def _parse_restored(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                restored_type_0 = datetime.datetime.fromisoformat(data)



                return restored_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        restored = _parse_restored(d.pop("restored", UNSET))


        def _parse_restoring(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                restoring_type_0 = datetime.datetime.fromisoformat(data)



                return restoring_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        restoring = _parse_restoring(d.pop("restoring", UNSET))


        def _parse_results_written(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                results_written_type_0 = datetime.datetime.fromisoformat(data)



                return results_written_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        results_written = _parse_results_written(d.pop("results_written", UNSET))


        def _parse_running(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                running_type_0 = datetime.datetime.fromisoformat(data)



                return running_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        running = _parse_running(d.pop("running", UNSET))


        def _parse_spark_application(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        spark_application = _parse_spark_application(d.pop("spark_application", UNSET))


        def _parse_spark_job_group(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        spark_job_group = _parse_spark_job_group(d.pop("spark_job_group", UNSET))


        _spark_jobs = d.pop("spark_jobs", UNSET)
        spark_jobs: list[SparkJobTiming] | Unset = UNSET
        if _spark_jobs is not UNSET:
            spark_jobs = []
            for spark_jobs_item_data in _spark_jobs:
                spark_jobs_item = SparkJobTiming.from_dict(spark_jobs_item_data)



                spark_jobs.append(spark_jobs_item)


        timings = cls(
            claimed=claimed,
            computed=computed,
            epochs=epochs,
            finished=finished,
            first_epoch=first_epoch,
            first_snapshot=first_snapshot,
            planned=planned,
            queued=queued,
            restored=restored,
            restoring=restoring,
            results_written=results_written,
            running=running,
            spark_application=spark_application,
            spark_job_group=spark_job_group,
            spark_jobs=spark_jobs,
        )


        timings.additional_properties = d
        return timings

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
