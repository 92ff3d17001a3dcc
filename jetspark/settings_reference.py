"""The settings reference: every ``JETSPARK_*`` variable, read off the settings classes.

``make docs`` (``python -m jetspark.settings_reference --write``) writes it into the README's
table and into docker-compose.yml's list of variables passed through to the containers;
``tests/test_settings_reference.py`` fails when either differs from what the classes say.
A field's meaning is the docstring under it in ``jetspark/settings.py``.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from jetspark import settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
COMPOSE = ROOT / "docker-compose.yml"
TABLE_BEGIN = "<!-- settings:begin (make docs writes this table from jetspark/settings.py) -->"
TABLE_END = "<!-- settings:end -->"
COMPOSE_BEGIN = "  # settings:begin (make docs writes this list from jetspark/settings.py)"
COMPOSE_END = "  # settings:end"

API_SECRETS = ("JETSPARK_API_TOKENS", "JETSPARK_API_PRINCIPALS")
"""Only the API reads them: Compose gives them to the API's container alone (as ``jetspark
up`` keeps them from its workers, which run hostile DAGs)."""
COMPOSE_SET = ("JETSPARK_DATABASE_URL", "JETSPARK_REDIS_URL")
"""Compose names its own servers, unless the shell names others."""

_DAY_S = 24 * 3600


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, kind, default and meaning."""

    variable: str
    kind: str
    default: str
    meaning: str
    group: str


def settings_classes() -> list[type[BaseSettings]]:
    """The settings classes in the order ``jetspark/settings.py`` defines them."""
    found = [
        value
        for value in vars(settings).values()
        if inspect.isclass(value)
        and issubclass(value, BaseSettings)
        and value is not BaseSettings
        and value.__module__ == settings.__name__
    ]
    return sorted(found, key=lambda cls: inspect.getsourcelines(cls)[1])


def field_docstrings(cls: type[BaseSettings]) -> dict[str, str]:
    """The string literal under each field of ``cls`` (attribute docstrings, PEP 257)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    found: dict[str, str] = {}
    for field, after in zip(body, [*body[1:], None], strict=True):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            text = " ".join(after.value.value.split())
            # "``JETSPARK_X``: what it is" says the name the table already gives.
            found[field.target.id] = re.sub(r"^``JETSPARK_[A-Z_]+``: ", "", text)
    return found


def _kind(annotation: Any) -> str:
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) is not None and get_origin(annotation) is not list and args:
        return _kind(args[0])  # Optional[X], Annotated[X, ...]
    if annotation is list or get_origin(annotation) is list:
        return "list"
    return {bool: "bool", int: "int", float: "number", Path: "path"}.get(annotation, "text")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _default(name: str, info: FieldInfo) -> str:
    """The default as markdown: the value to set in code, a reading of it after."""
    if info.default_factory is not None:
        value: Any = info.default_factory()  # type: ignore[call-arg]
    elif info.is_required():
        return "required"
    else:
        value = info.default
    if value is None or value == []:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return f"`{','.join(str(item) for item in value)}`"
    if isinstance(value, int | float):
        shown = f"`{_number(value)}`"
        if name.endswith("_s") and value >= _DAY_S and value % _DAY_S == 0:
            shown += f" ({_number(value / _DAY_S)} days)"
        elif name.endswith("_bytes") and value >= 1024 and value % 1024 == 0:
            kib = value // 1024
            shown += f" ({kib // 1024} MiB)" if kib % 1024 == 0 else f" ({kib} KiB)"
        return shown
    return f"`{value}`"


def _first_sentence(doc: str) -> str:
    paragraph = " ".join(doc.split("\n\n")[0].split())
    return re.split(r"(?<=[.:;])\s", paragraph)[0].rstrip(".:;")


def reference() -> list[Setting]:
    """Every setting, class by class, field by field."""
    rows: list[Setting] = []
    for cls in settings_classes():
        prefix = str(cls.model_config.get("env_prefix", ""))
        meanings = field_docstrings(cls)
        group = _first_sentence(inspect.getdoc(cls) or cls.__name__)
        for name, info in cls.model_fields.items():
            rows.append(
                Setting(
                    variable=(prefix + name).upper(),
                    kind=_kind(info.annotation),
                    default=_default(name, info),
                    meaning=meanings.get(name, ""),
                    group=group,
                )
            )
    return rows


def undocumented() -> list[str]:
    """Variables whose field has no docstring (the reference would leave them unexplained)."""
    return [row.variable for row in reference() if not row.meaning]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def readme_table() -> str:
    """The README's settings table, markdown."""
    lines = ["| variable | type | default | meaning |", "| --- | --- | --- | --- |"]
    group = None
    for row in reference():
        if row.group != group:
            group = row.group
            lines.append(f"| **{_cell(group)}** | | | |")
        lines.append(
            f"| `{row.variable}` | {row.kind} | {_cell(row.default)} | {_cell(row.meaning)} |"
        )
    return "\n".join(lines)


def compose_variables() -> list[str]:
    """What every jetspark container is given from the shell (or ``.env``) when set there."""
    return [
        f"  {row.variable}:" for row in reference() if row.variable not in API_SECRETS + COMPOSE_SET
    ]


def _replace_block(text: str, begin: str, end: str, body: str, where: Path) -> str:
    try:
        head, rest = text.split(begin + "\n", 1)
        _, tail = rest.split(end + "\n", 1)
    except ValueError:
        raise SystemExit(f"{where}: the lines {begin!r} and {end!r} are missing") from None
    return f"{head}{begin}\n{body}\n{end}\n{tail}"


def rendered_readme(text: str) -> str:
    return _replace_block(text, TABLE_BEGIN, TABLE_END, readme_table(), README)


def rendered_compose(text: str) -> str:
    return _replace_block(text, COMPOSE_BEGIN, COMPOSE_END, "\n".join(compose_variables()), COMPOSE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite README.md and compose")
    args = parser.parse_args(argv)
    missing = undocumented()
    if missing:
        print(
            f"no docstring under the field of {', '.join(missing)} in jetspark/settings.py",
            file=sys.stderr,
        )
        return 1
    if not args.write:
        print(readme_table())
        return 0
    for path, render in ((README, rendered_readme), (COMPOSE, rendered_compose)):
        path.write_text(render(path.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
