"""Worker liveness (the workers table) and the rule of each transition (job_transitions.rule)

Revision ID: 0012
Revises: 0010
Create Date: 2026-11-25 09:00:00.000000

- ``workers``: a row per live worker process with the key of the session-level advisory lock
  it holds on a connection of its own; its death releases the lock and the other workers
  requeue its jobs at once instead of after its lease (issue 24).
- ``job_transitions.rule``: the name of the ``orchestration.RULES`` rule that allowed each
  move. Rows recorded before are named from their statuses and cause as the rules of this
  revision would have named them.

(Revision 0011 never landed: the number is skipped, and 0012 follows 0010.)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0010"
branch_labels = None
depends_on = None

_HELD = "('STARTING', 'RUNNING', 'COMPLETING', 'RESTARTING')"

# The rules as this revision names them, for the rows recorded before it: (from, to) -> rule.
_BACKFILL = f"""
UPDATE job_transitions SET rule = CASE
    WHEN from_status IS NULL THEN 'submit'
    WHEN to_status = 'STARTING' THEN 'claim'
    WHEN to_status = 'RUNNING' THEN 'start'
    WHEN to_status = 'COMPLETING' THEN 'complete-inputs'
    WHEN to_status = 'COMPLETED' THEN 'finish'
    WHEN to_status = 'FAILED' THEN 'fail'
    WHEN to_status = 'CANCELLED' THEN 'cancel'
    WHEN to_status = 'SUSPENDED' THEN 'suspend'
    WHEN to_status = 'RESTARTING' THEN 'restart'
    WHEN to_status = 'QUEUED' AND from_status = 'SUSPENDED' THEN 'resume'
    WHEN to_status = 'QUEUED' AND from_status IN {_HELD} AND cause LIKE 'lease%expired'
        THEN 'lease-expired'
    WHEN to_status = 'QUEUED' AND from_status IN {_HELD} THEN 'requeue'
END
"""


def upgrade() -> None:
    op.add_column("job_transitions", sa.Column("rule", sa.String(32), nullable=True))
    op.execute(_BACKFILL)
    op.create_table(
        "workers",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("lock_key", sa.Integer(), sa.Identity(), nullable=False, unique=True),
        sa.Column("host", sa.String(256), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column(
            "started_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "heartbeat_at",
            sa.DateTime(timezone=True),
            server_default=sa.func.now(),
            nullable=False,
        ),
    )


def downgrade() -> None:
    op.drop_table("workers")
    op.drop_column("job_transitions", "rule")
