"""Every stored plan upgraded to plan version 2 (the typed plan the engine runs)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 19:00:00.000000

The engine reads one shape of plan (``jetspark.dag.plan.PLAN_VERSION``), with no branch for
plans stored by earlier versions: each such plan is upgraded here, once
(``jetspark.dag.plan_upgrade``), taking what it lacks from the job's definition and the
registry of kinds. A plan this version cannot read (a definition under rules since retired)
is set to NULL: such a job, if it is still to run, fails naming why (``worker.job_attempt``).
Downgrading keeps the plans: the earlier code ignores the fields it does not know.
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from jetspark.dag.plan_upgrade import NotUpgradable, upgrade_plan

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_BATCH = 500


def upgrade() -> None:
    bind = op.get_bind()
    after = None
    while True:
        rows = bind.execute(
            sa.text(
                "SELECT id, plan, definition FROM jobs WHERE plan IS NOT NULL "
                "AND plan->'version' IS NULL AND (CAST(:after AS uuid) IS NULL OR id > :after) "
                "ORDER BY id LIMIT :batch"
            ),
            {"after": after, "batch": _BATCH},
        ).all()
        if not rows:
            return
        for job_id, plan, definition in rows:
            try:
                upgraded = upgrade_plan(plan, definition)
            except NotUpgradable:
                bind.execute(sa.text("UPDATE jobs SET plan = NULL WHERE id = :id"), {"id": job_id})
                continue
            if upgraded is not None:
                bind.execute(
                    sa.text("UPDATE jobs SET plan = CAST(:plan AS jsonb) WHERE id = :id"),
                    {"id": job_id, "plan": json.dumps(upgraded)},
                )
        after = rows[-1][0]


def downgrade() -> None:
    """Nothing to undo: version 2 plans read as version 1 (unknown fields are ignored)."""
