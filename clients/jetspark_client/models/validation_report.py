from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.diagnostic import Diagnostic
  from ..models.validation_report_plan import ValidationReportPlan





T = TypeVar("T", bound="ValidationReport")



@_attrs_define
class ValidationReport:
    """ 
        Attributes:
            diagnostics (list[Diagnostic]):
            plan (ValidationReportPlan):
            valid (bool):
     """

    diagnostics: list[Diagnostic]
    plan: ValidationReportPlan
    valid: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.diagnostic import Diagnostic # noqa: PLC0415
        from ..models.validation_report_plan import ValidationReportPlan # noqa: PLC0415
        diagnostics = []
        for diagnostics_item_data in self.diagnostics:
            diagnostics_item = diagnostics_item_data.to_dict()
            diagnostics.append(diagnostics_item)



        plan = self.plan.to_dict()

        valid = self.valid


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "diagnostics": diagnostics,
            "plan": plan,
            "valid": valid,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.diagnostic import Diagnostic # noqa: PLC0415
        from ..models.validation_report_plan import ValidationReportPlan # noqa: PLC0415
        d = dict(src_dict)
        diagnostics = []
        _diagnostics = d.pop("diagnostics")
        for diagnostics_item_data in (_diagnostics):
            diagnostics_item = Diagnostic.from_dict(diagnostics_item_data)



            diagnostics.append(diagnostics_item)


        plan = ValidationReportPlan.from_dict(d.pop("plan"))




        valid = d.pop("valid")

        validation_report = cls(
            diagnostics=diagnostics,
            plan=plan,
            valid=valid,
        )


        validation_report.additional_properties = d
        return validation_report

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
