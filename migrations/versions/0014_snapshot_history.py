"""snapshot_history: a stream's last snapshots, committed, failed and abandoned (issue 28)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 19:00:00.000000

A row per snapshot a stream's attempt took or tried to take: when it started, when its state
was written and when it committed (or failed, or was abandoned, with the reason), its bytes,
rows and keys per vertex and the replicas that acknowledged it. The job's last
``JETSPARK_STREAM_SNAPSHOT_HISTORY`` rows are kept; a foreign key deletes them with the job.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "snapshot_history",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column(
            "job_id",
            postgresql.UUID(as_uuid=True),
            sa.ForeignKey("jobs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.BigInteger(), nullable=False),
        sa.Column("epoch", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("vertices", postgresql.JSONB(), nullable=False),
        sa.Column("replication", postgresql.JSONB(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "state IN ('in_progress', 'committed', 'failed', 'abandoned')",
            name="ck_snapshot_history_state_known",
        ),
    )
    op.create_index(
        "ux_snapshot_history_job_attempt_snapshot",
        "snapshot_history",
        ["job_id", "attempt", "snapshot_id"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_table("snapshot_history")
