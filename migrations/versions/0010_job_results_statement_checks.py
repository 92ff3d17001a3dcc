"""job_results: the job each record belongs to, checked once per statement, not per row

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 09:00:00.000000

A batch job's results are written by one ``COPY`` of up to ``results_cap`` records. Their
foreign key on ``jobs`` checked each row apart: for 100k records, 0.23 s of PostgreSQL's
0.39 s (issue 16). The same rule is now kept by statement-level triggers, each reading the
statement's rows as a transition table: a write of records whose job does not exist fails
with ``foreign_key_violation`` (and locks the jobs it names ``FOR KEY SHARE``, as the foreign
key's check did, so a concurrent delete waits for the write's transaction), and deleting
jobs deletes their records (the former ``ON DELETE CASCADE``). A job's id never changes, so
updates of ``jobs.id`` need no rule.
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_FOREIGN_KEY = "fk_job_results_job_id_jobs"

_CHECK = """
CREATE FUNCTION job_results_jobs_exist() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM jobs WHERE id IN (SELECT DISTINCT job_id FROM written) FOR KEY SHARE;
    IF EXISTS (
        SELECT 1 FROM (SELECT DISTINCT job_id FROM written) AS w
        WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = w.job_id)
    ) THEN
        RAISE EXCEPTION USING
            ERRCODE = 'foreign_key_violation',
            MESSAGE = 'job_results: a record names a job that does not exist',
            CONSTRAINT = 'job_results_jobs_exist';
    END IF;
    RETURN NULL;
END
$$
"""

_CASCADE = """
CREATE FUNCTION jobs_delete_results() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM job_results WHERE job_id IN (SELECT id FROM removed);
    RETURN NULL;
END
$$
"""


def upgrade() -> None:
    op.drop_constraint(_FOREIGN_KEY, "job_results", type_="foreignkey")
    op.execute(_CHECK)
    for event in ("INSERT", "UPDATE"):
        op.execute(
            f"CREATE TRIGGER job_results_jobs_exist_on_{event.lower()} AFTER {event} "
            "ON job_results REFERENCING NEW TABLE AS written "
            "FOR EACH STATEMENT EXECUTE FUNCTION job_results_jobs_exist()"
        )
    op.execute(_CASCADE)
    op.execute(
        "CREATE TRIGGER jobs_delete_results AFTER DELETE ON jobs REFERENCING OLD TABLE AS removed "
        "FOR EACH STATEMENT EXECUTE FUNCTION jobs_delete_results()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER jobs_delete_results ON jobs")
    op.execute("DROP FUNCTION jobs_delete_results()")
    for event in ("insert", "update"):
        op.execute(f"DROP TRIGGER job_results_jobs_exist_on_{event} ON job_results")
    op.execute("DROP FUNCTION job_results_jobs_exist()")
    op.create_foreign_key(
        _FOREIGN_KEY, "job_results", "jobs", ["job_id"], ["id"], ondelete="CASCADE"
    )
