"""principals: jobs, named snapshots and idempotency keys belong to a principal

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 21:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

LEGACY = "legacy"
"""Rows made before principals existed belong to ``legacy`` (admins see them)."""


def upgrade() -> None:
    op.add_column(
        "jobs",
        sa.Column("principal", sa.String(length=64), nullable=False, server_default=LEGACY),
    )
    op.drop_constraint("uq_jobs_idempotency_key", "jobs", type_="unique")
    op.create_index(
        "ix_jobs_principal_idempotency_key",
        "jobs",
        ["principal", "idempotency_key"],
        unique=True,
    )
    op.create_index(
        "ix_jobs_principal_created_at_id", "jobs", ["principal", "created_at", "id"], unique=False
    )
    op.create_index("ix_jobs_principal_status", "jobs", ["principal", "status"], unique=False)
    op.add_column("snapshots", sa.Column("principal", sa.String(length=64), nullable=True))
    op.execute(
        "UPDATE snapshots SET principal = jobs.principal FROM jobs "
        "WHERE snapshots.job_id = jobs.id AND snapshots.name IS NOT NULL"
    )
    op.drop_constraint("uq_snapshots_name", "snapshots", type_="unique")
    op.create_index("ix_snapshots_principal_name", "snapshots", ["principal", "name"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_snapshots_principal_name", table_name="snapshots")
    op.create_unique_constraint("uq_snapshots_name", "snapshots", ["name"])
    op.drop_column("snapshots", "principal")
    op.drop_index("ix_jobs_principal_status", table_name="jobs")
    op.drop_index("ix_jobs_principal_created_at_id", table_name="jobs")
    op.drop_index("ix_jobs_principal_idempotency_key", table_name="jobs")
    op.create_unique_constraint("uq_jobs_idempotency_key", "jobs", ["idempotency_key"])
    op.drop_column("jobs", "principal")
