"""Deleting finished jobs: named snapshots outlive their job; indexes for retention

``snapshots.job_id`` loses its foreign key: a job's deletion
(``DELETE /v1/jobs/{id}``, retention) deletes its unnamed snapshots itself;
an exported (named) one stays until ``DELETE /v1/jobs/{id}/snapshots/{name}``, still keyed by
the id of the job whose run wrote its state in Redis.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 02:30:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_constraint("fk_snapshots_job_id_jobs", "snapshots", type_="foreignkey")
    # The retention sweep finds finished jobs by status and age; a job's deletion cascades
    # to its lifecycle requests by job id.
    op.create_index("ix_jobs_status_finished_at", "jobs", ["status", "finished_at"])
    op.create_index("ix_lifecycle_requests_job_id", "lifecycle_requests", ["job_id"])


def downgrade() -> None:
    op.drop_index("ix_lifecycle_requests_job_id", table_name="lifecycle_requests")
    op.drop_index("ix_jobs_status_finished_at", table_name="jobs")
    # Named snapshots of jobs deleted meanwhile have no job to point at: they go.
    op.execute(
        "DELETE FROM snapshots s WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = s.job_id)"
    )
    op.create_foreign_key(
        "fk_snapshots_job_id_jobs", "snapshots", "jobs", ["job_id"], ["id"], ondelete="CASCADE"
    )
