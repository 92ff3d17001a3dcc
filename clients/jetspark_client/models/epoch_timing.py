from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="EpochTiming")



@_attrs_define
class EpochTiming:
    """ Where one epoch of a stream spent its seconds (``worker/engine/streaming/profile.py``).

    ``run_s`` covers the vertices (planning, py4j and the Spark jobs they ran); on sampled
    epochs ``spark_s`` is the Spark jobs' own time and ``driver_s`` the rest. ``snapshot_s``
    and the state written are set on epochs that took a snapshot.

        Attributes:
            epoch (int):
            await_commit_s (float | Unset):  Default: 0.0.
            checkpoint_s (float | Unset):  Default: 0.0.
            commit_s (float | Unset):  Default: 0.0.
            driver_s (float | None | Unset):
            items (int | Unset):  Default: 0.
            plan_s (float | Unset):  Default: 0.0.
            run_s (float | Unset):  Default: 0.0.
            snapshot_s (float | None | Unset):
            spark_jobs (int | None | Unset):
            spark_s (float | None | Unset):
            spark_stages (int | None | Unset):
            state_bytes (int | None | Unset):
            state_rows (int | None | Unset):
     """

    epoch: int
    await_commit_s: float | Unset = 0.0
    checkpoint_s: float | Unset = 0.0
    commit_s: float | Unset = 0.0
    driver_s: float | None | Unset = UNSET
    items: int | Unset = 0
    plan_s: float | Unset = 0.0
    run_s: float | Unset = 0.0
    snapshot_s: float | None | Unset = UNSET
    spark_jobs: int | None | Unset = UNSET
    spark_s: float | None | Unset = UNSET
    spark_stages: int | None | Unset = UNSET
    state_bytes: int | None | Unset = UNSET
    state_rows: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        epoch = self.epoch

        await_commit_s = self.await_commit_s

        checkpoint_s = self.checkpoint_s

        commit_s = self.commit_s

        driver_s: float | None | Unset
        if isinstance(self.driver_s, Unset):
            driver_s = UNSET
        else:
            driver_s = self.driver_s

        items = self.items

        plan_s = self.plan_s

        run_s = self.run_s

        snapshot_s: float | None | Unset
        if isinstance(self.snapshot_s, Unset):
            snapshot_s = UNSET
        else:
            snapshot_s = self.snapshot_s

        spark_jobs: int | None | Unset
        if isinstance(self.spark_jobs, Unset):
            spark_jobs = UNSET
        else:
            spark_jobs = self.spark_jobs

        spark_s: float | None | Unset
        if isinstance(self.spark_s, Unset):
            spark_s = UNSET
        else:
            spark_s = self.spark_s

        spark_stages: int | None | Unset
        if isinstance(self.spark_stages, Unset):
            spark_stages = UNSET
        else:
            spark_stages = self.spark_stages

        state_bytes: int | None | Unset
        if isinstance(self.state_bytes, Unset):
            state_bytes = UNSET
        else:
            state_bytes = self.state_bytes

        state_rows: int | None | Unset
        if isinstance(self.state_rows, Unset):
            state_rows = UNSET
        else:
            state_rows = self.state_rows


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "epoch": epoch,
        })
        if await_commit_s is not UNSET:
            field_dict["await_commit_s"] = await_commit_s
        if checkpoint_s is not UNSET:
            field_dict["checkpoint_s"] = checkpoint_s
        if commit_s is not UNSET:
            field_dict["commit_s"] = commit_s
        if driver_s is not UNSET:
            field_dict["driver_s"] = driver_s
        if items is not UNSET:
            field_dict["items"] = items
        if plan_s is not UNSET:
            field_dict["plan_s"] = plan_s
        if run_s is not UNSET:
            field_dict["run_s"] = run_s
        if snapshot_s is not UNSET:
            field_dict["snapshot_s"] = snapshot_s
        if spark_jobs is not UNSET:
            field_dict["spark_jobs"] = spark_jobs
        if spark_s is not UNSET:
            field_dict["spark_s"] = spark_s
        if spark_stages is not UNSET:
            field_dict["spark_stages"] = spark_stages
        if state_bytes is not UNSET:
            field_dict["state_bytes"] = state_bytes
        if state_rows is not UNSET:
            field_dict["state_rows"] = state_rows

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        epoch = d.pop("epoch")

        await_commit_s = d.pop("await_commit_s", UNSET)

        checkpoint_s = d.pop("checkpoint_s", UNSET)

        commit_s = d.pop("commit_s", UNSET)

        def _parse_driver_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        driver_s = _parse_driver_s(d.pop("driver_s", UNSET))


        items = d.pop("items", UNSET)

        plan_s = d.pop("plan_s", UNSET)

        run_s = d.pop("run_s", UNSET)

        def _parse_snapshot_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        snapshot_s = _parse_snapshot_s(d.pop("snapshot_s", UNSET))


        def _parse_spark_jobs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        spark_jobs = _parse_spark_jobs(d.pop("spark_jobs", UNSET))


        def _parse_spark_s(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        spark_s = _parse_spark_s(d.pop("spark_s", UNSET))


        def _parse_spark_stages(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        spark_stages = _parse_spark_stages(d.pop("spark_stages", UNSET))


        def _parse_state_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        state_bytes = _parse_state_bytes(d.pop("state_bytes", UNSET))


        def _parse_state_rows(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        state_rows = _parse_state_rows(d.pop("state_rows", UNSET))


        epoch_timing = cls(
            epoch=epoch,
            await_commit_s=await_commit_s,
            checkpoint_s=checkpoint_s,
            commit_s=commit_s,
            driver_s=driver_s,
            items=items,
            plan_s=plan_s,
            run_s=run_s,
            snapshot_s=snapshot_s,
            spark_jobs=spark_jobs,
            spark_s=spark_s,
            spark_stages=spark_stages,
            state_bytes=state_bytes,
            state_rows=state_rows,
        )


        epoch_timing.additional_properties = d
        return epoch_timing

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
