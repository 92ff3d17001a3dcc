"""Load ``module:Class`` only from allow-listed modules; nothing is ever uploaded as code."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from jetspark.processor.processor import Processor


class ProcessorNotAllowed(Exception):
    """The processor's module is not in the allowed Python modules."""


class ProcessorNotFound(Exception):
    """The processor class does not exist or is not a ``Processor``."""

    def __init__(self, message: str, *, module_missing: bool = False) -> None:
        super().__init__(message)
        self.module_missing = module_missing
        """The module itself is not importable here (it may be on the workers' path only)."""


def module_allowed(module: str, allowed: Sequence[str]) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in allowed)


def load_processor_class(spec: str, allowed: Sequence[str]) -> type[Processor]:
    """Import ``module:Class`` after checking the module against ``allowed``."""
    module_name, _, class_name = spec.partition(":")
    if not module_allowed(module_name, allowed):
        raise ProcessorNotAllowed(
            f"module {module_name!r} is not in the allowed Python modules {list(allowed)}"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        missing = isinstance(error, ModuleNotFoundError) and error.name is not None
        missing = missing and module_name.startswith(str(error.name))
        raise ProcessorNotFound(
            f"cannot import {module_name!r}: {error}", module_missing=missing
        ) from error
    found = getattr(module, class_name, None)
    if not (isinstance(found, type) and issubclass(found, Processor)):
        raise ProcessorNotFound(f"{spec} is not a jetspark.processor.Processor subclass")
    return found


def declared_schema(processor_class: type[Processor], args: Mapping[str, Any]) -> str:
    """The class's output schema DDL for these args; raises ``ValueError`` when it has none."""
    ddl = processor_class.schema_for(args)
    if not isinstance(ddl, str) or not ddl.strip():
        raise ValueError(
            f"{processor_class.__name__} declares no output_schema (Spark DDL, e.g. 'word string')"
        )
    return ddl
