"""Load ``module:Class`` only from allow-listed modules; nothing is ever uploaded as code."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from jetspark.processor import Processor


class ProcessorNotAllowed(Exception):
    """The processor's module is not in the allowed Python modules."""


class ProcessorNotFound(Exception):
    """The processor class does not exist or is not a ``Processor``."""


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
        raise ProcessorNotFound(f"cannot import {module_name!r}: {error}") from error
    found = getattr(module, class_name, None)
    if not (isinstance(found, type) and issubclass(found, Processor)):
        raise ProcessorNotFound(f"{spec} is not a jetspark.processor.Processor subclass")
    return found
