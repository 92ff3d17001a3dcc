"""jobs: DAGs naming ``jetspark.processors`` name ``jetspark.example_processors`` (issue 25)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27 23:30:00.000000

The example processors' package was renamed so that it no longer shares a name with the
processor API (``jetspark.processor``). A job stored before names the old module in its
definition and its plan (a ``class`` or a ``python:`` partitioner); it is rewritten here once,
so a queued or restarted job still finds its processors.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_RENAMES = (
    ('"jetspark.processors.', '"jetspark.example_processors.'),
    ('"python:jetspark.processors.', '"python:jetspark.example_processors.'),
)


def _rewrite(column: str, renames: tuple[tuple[str, str], ...]) -> None:
    for old, new in renames:
        op.get_bind().execute(
            sa.text(
                f"UPDATE jobs SET {column} = replace({column}::text, :old, :new)::jsonb "
                f"WHERE strpos({column}::text, :old) > 0"
            ),
            {"old": old, "new": new},
        )


def upgrade() -> None:
    for column in ("definition", "plan"):
        _rewrite(column, _RENAMES)


def downgrade() -> None:
    backwards = tuple((new, old) for old, new in _RENAMES)
    for column in ("definition", "plan"):
        _rewrite(column, backwards)
