"""How deep a JSON text or value nests, measured without recursion (a hostile document is
refused before a recursive parser or walker could overflow the stack)."""

from __future__ import annotations

import re
from typing import Any

_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")


def text_depth(text: bytes | str) -> int:
    """The deepest nesting of arrays and objects in ``text`` (0 for a scalar)."""
    data = text.encode() if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= 1:
        return data.count(b"[") + data.count(b"{")
    depth = deepest = 0
    for bracket in _BRACKETS.finditer(_STRINGS.sub(b'""', data)):
        if bracket.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def value_depth(value: Any) -> int:
    """The deepest nesting of lists and dicts in ``value`` (0 for a scalar)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in item)
    return deepest
