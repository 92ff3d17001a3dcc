"""`jetspark submit/jobs/status/cancel` against a live API (no worker): output, exit codes,
errors; tests/cli/test_client_jobs.py runs jobs on a worker."""

from __future__ import annotations

import json
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from launcher.main import app
from tests.api.conftest import TOKEN
from tests.cli.conftest import JETSPARK, poll, process_env

runner = CliRunner()


def run(api_url: str, *args: str, token: str = TOKEN) -> Result:
    return runner.invoke(app, [*args, "--url", api_url, "--token", token])


def one_error_line(result: Result) -> str:
    """The command failed with exactly one line on stderr, and no traceback anywhere."""
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def dag_file(tmp_path: Path, body: dict[str, Any], name: str = "dag.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(body))
    return path


def named(word_count: dict[str, Any], tmp_path: Path) -> tuple[str, Path]:
    """The example DAG under a name no other test uses, so listings can be checked exactly."""
    name = f"cli-{uuid.uuid4().hex[:8]}"
    return name, dag_file(tmp_path, word_count | {"name": name})


def test_submit_prints_the_id_of_the_created_job(
    api_url: str, http: httpx.Client, word_count: dict[str, Any], tmp_path: Path
) -> None:
    name, path = named(word_count, tmp_path)
    result = run(api_url, "submit", str(path))
    assert result.exit_code == 0, result.output
    job_id = uuid.UUID(result.stdout.strip())
    view = http.get(f"/v1/jobs/{job_id}").json()
    assert view["name"] == name and view["status"] == "QUEUED"


def test_the_same_idempotency_key_gives_the_same_job(
    api_url: str, word_count: dict[str, Any], tmp_path: Path
) -> None:
    _, path = named(word_count, tmp_path)
    key = uuid.uuid4().hex
    first = run(api_url, "submit", str(path), "--idempotency-key", key)
    again = run(api_url, "submit", str(path), "--idempotency-key", key)
    assert first.exit_code == again.exit_code == 0
    assert first.stdout.strip() == again.stdout.strip()


def test_jobs_lists_by_name_and_status(
    api_url: str, word_count: dict[str, Any], tmp_path: Path
) -> None:
    name, path = named(word_count, tmp_path)
    ids = {run(api_url, "submit", str(path)).stdout.strip() for _ in range(2)}
    listed = run(api_url, "jobs", "--name", name)
    assert listed.exit_code == 0, listed.output
    header, *rows = listed.stdout.strip().splitlines()
    assert header.split()[:3] == ["ID", "NAME", "STATUS"]
    assert {row.split()[0] for row in rows} == ids
    assert all(row.split()[1:3] == [name, "QUEUED"] for row in rows)
    limited = run(api_url, "jobs", "--name", name, "--limit", "1")
    assert len(limited.stdout.strip().splitlines()) == 2
    other = run(api_url, "jobs", "--name", name, "--status", "COMPLETED", "--status", "FAILED")
    assert other.exit_code == 0 and other.stdout.strip() == "no jobs"


def test_status_shows_the_job_and_its_json(
    api_url: str, word_count: dict[str, Any], tmp_path: Path
) -> None:
    name, path = named(word_count, tmp_path)
    job_id = run(api_url, "submit", str(path)).stdout.strip()
    shown = run(api_url, "status", job_id)
    assert shown.exit_code == 0, shown.output
    fields = dict(line.split(":", 1) for line in shown.stdout.splitlines())
    assert fields["id"].strip() == job_id and fields["name"].strip() == name
    assert fields["status"].strip() == "QUEUED"
    as_json = run(api_url, "status", job_id, "--json")
    view = json.loads(as_json.stdout)
    assert view["id"] == job_id and view["progress"] == {"items_in": 0, "items_out": 0}


def test_cancel_then_cancel_again_says_cancelled_again(
    api_url: str, word_count: dict[str, Any], tmp_path: Path
) -> None:
    _, path = named(word_count, tmp_path)
    job_id = run(api_url, "submit", str(path)).stdout.strip()
    cancelled = run(api_url, "cancel", job_id)
    assert cancelled.exit_code == 0, cancelled.output
    assert cancelled.stdout.strip() == f"{job_id} CANCELLED"
    again = run(api_url, "cancel", job_id)  # a retry after a lost answer is no error
    assert again.exit_code == 0 and again.stdout.strip() == f"{job_id} CANCELLED"


def test_an_invalid_dag_lists_every_pointer_on_one_line(
    api_url: str, word_count: dict[str, Any], tmp_path: Path
) -> None:
    body = json.loads(json.dumps(word_count))
    del body["dag"]["edges"][1]["key"]  # a partitioned edge needs a key
    body["dag"]["vertices"][1]["params"]["explode"] = "reflect('a', 'b')"  # not allowed
    line = one_error_line(run(api_url, "submit", str(dag_file(tmp_path, body))))
    assert line.startswith("error: Invalid DAG (422): ")
    assert "/dag/edges/1/key: " in line and "needs a key" in line
    assert "/dag/vertices/1/params/explode: " in line and "reflect" in line


def test_a_malformed_job_names_the_field(
    api_url: str, word_count: dict[str, Any], tmp_path: Path
) -> None:
    body = json.loads(json.dumps(word_count))
    body["dag"]["vertices"][1]["local_parallelism"] = 0
    line = one_error_line(run(api_url, "submit", str(dag_file(tmp_path, body))))
    assert line.startswith("error: Invalid request (422): /dag/vertices/1/local_parallelism: ")


def test_files_that_cannot_be_sent_are_one_line_each(api_url: str, tmp_path: Path) -> None:
    missing = one_error_line(run(api_url, "submit", str(tmp_path / "nope.json")))
    assert missing == f"error: cannot read {tmp_path / 'nope.json'}: No such file or directory"
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",\n "dag": ')
    line = one_error_line(run(api_url, "submit", str(broken)))
    assert line.startswith(f"error: {broken} is not valid JSON:") and "line 2" in line


def test_a_wrong_token_and_an_unknown_job_are_one_line_each(api_url: str) -> None:
    unauthorized = one_error_line(run(api_url, "jobs", token="not-a-token"))
    assert "(401)" in unauthorized and "JETSPARK_TOKEN" in unauthorized
    unknown = one_error_line(run(api_url, "status", str(uuid.uuid4())))
    assert unknown.startswith("error: Job not found (404):")
    malformed = one_error_line(run(api_url, "status", "not-a-uuid"))
    assert malformed == "error: 'not-a-uuid' is not a job id (a UUID, as `jetspark jobs` lists)"


def test_wait_follows_the_job_and_exits_1_when_it_is_cancelled(
    api_url: str, http: httpx.Client, word_count: dict[str, Any], tmp_path: Path
) -> None:
    """No worker serves this API: cancel the job from outside and see --wait report it."""
    name, path = named(word_count, tmp_path)

    def cancel_when_listed() -> None:
        def listed() -> str | None:
            items = http.get("/v1/jobs", params={"name": name}).json()["items"]
            return str(items[0]["id"]) if items else None

        job_id = poll(listed, deadline_s=30, what="the submitted job listed")
        http.post(f"/v1/jobs/{job_id}/cancel").raise_for_status()

    canceller = threading.Thread(target=cancel_when_listed)
    canceller.start()
    result = run(api_url, "submit", str(path), "--wait")
    canceller.join(timeout=30)
    assert result.exit_code == 1, result.output
    job_id = result.stdout.strip()
    progress = [line.split()[0] for line in result.stderr.strip().splitlines()[:-1]]
    assert progress[0] == "QUEUED" and progress[-1] == "CANCELLED"
    assert result.stderr.strip().splitlines()[-1].startswith(f"error: job {job_id} CANCELLED")


@pytest.mark.slow
def test_an_unreachable_api_is_one_line_from_the_console_script() -> None:
    from tests.live_server import free_port

    url = f"http://127.0.0.1:{free_port()}"
    done = subprocess.run(
        [JETSPARK, "jobs", "--url", url, "--token", "t"],
        capture_output=True,
        text=True,
        timeout=60,
        env=process_env(),
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: cannot reach the API at {url} ([Errno 111] Connection refused); "
        "is it running? (--url or JETSPARK_URL)"
    ]


def test_submit_reads_the_token_jetspark_up_kept(
    api_url: str,
    word_count: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "token").write_text(TOKEN + "\n")
    monkeypatch.setenv("JETSPARK_HOME", str(home))
    monkeypatch.delenv("JETSPARK_TOKEN", raising=False)
    _, path = named(word_count, tmp_path)
    result = runner.invoke(app, ["submit", str(path), "--url", api_url])
    assert result.exit_code == 0, result.output
    uuid.UUID(result.stdout.strip())
    (home / "token").write_text("not-the-token\n")
    line = one_error_line(runner.invoke(app, ["jobs", "--url", api_url]))
    assert "(401)" in line and f"check the token in {home / 'token'}" in line
    (home / "token").unlink()
    line = one_error_line(runner.invoke(app, ["jobs", "--url", api_url]))
    assert line == (
        "error: no token: pass --token, set JETSPARK_TOKEN or run `jetspark up` "
        f"(which writes {home / 'token'})"
    )
