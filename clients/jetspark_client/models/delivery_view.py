from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.delivery_view_source import DeliveryViewSource
from ..models.delivery_view_state import DeliveryViewState
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="DeliveryView")



@_attrs_define
class DeliveryView:
    """ One status change POSTed (or being POSTed) to one webhook URL.

        Attributes:
            attempts (int):
            created_at (datetime.datetime):
            finished_at (datetime.datetime | None):
            id (UUID):
            last_error (None | str):
            last_status_code (int | None):
            next_attempt_at (datetime.datetime | None):
            seq (int):
            source (DeliveryViewSource):
            state (DeliveryViewState):
            status (str):
            url (str):
     """

    attempts: int
    created_at: datetime.datetime
    finished_at: datetime.datetime | None
    id: UUID
    last_error: None | str
    last_status_code: int | None
    next_attempt_at: datetime.datetime | None
    seq: int
    source: DeliveryViewSource
    state: DeliveryViewState
    status: str
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        created_at = self.created_at.isoformat()

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        id = str(self.id)

        last_error: None | str
        last_error = self.last_error

        last_status_code: int | None
        last_status_code = self.last_status_code

        next_attempt_at: None | str
        if isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at

        seq = self.seq

        source = self.source.value

        state = self.state.value

        status = self.status

        url = self.url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attempts": attempts,
            "created_at": created_at,
            "finished_at": finished_at,
            "id": id,
            "last_error": last_error,
            "last_status_code": last_status_code,
            "next_attempt_at": next_attempt_at,
            "seq": seq,
            "source": source,
            "state": state,
            "status": status,
            "url": url,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




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




        def _parse_last_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_error = _parse_last_error(d.pop("last_error"))


        def _parse_last_status_code(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_status_code = _parse_last_status_code(d.pop("last_status_code"))


        def _parse_next_attempt_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)



                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at"))


        seq = d.pop("seq")

        source = DeliveryViewSource(d.pop("source"))




        state = DeliveryViewState(d.pop("state"))




        status = d.pop("status")

        url = d.pop("url")

        delivery_view = cls(
            attempts=attempts,
            created_at=created_at,
            finished_at=finished_at,
            id=id,
            last_error=last_error,
            last_status_code=last_status_code,
            next_attempt_at=next_attempt_at,
            seq=seq,
            source=source,
            state=state,
            status=status,
            url=url,
        )


        delivery_view.additional_properties = d
        return delivery_view

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
