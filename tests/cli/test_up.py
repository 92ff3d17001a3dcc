"""`jetspark up` end to end: embedded servers, a job run by its worker, a clean stop, data kept."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest

from tests.cli.conftest import EXAMPLE, JETSPARK, is_gone, log_of, poll, process_env
from tests.live_server import free_port

pytestmark = pytest.mark.slow

READY_DEADLINE_S = 240.0  # embedded PostgreSQL and Redis took a minute to start in a full run
JOB_DEADLINE_S = 300.0  # the worker cold-starts Spark and warms up on two shared cores
STOP_DEADLINE_S = 60.0


@dataclass
class Stack:
    process: subprocess.Popen[bytes]
    url: str
    home: Path
    stdout: Path
    stderr: Path

    def output(self) -> str:
        return f"stdout:\n{log_of(self.stdout)}\nstderr:\n{log_of(self.stderr)}"

    def tree(self) -> list[psutil.Process]:
        tree: list[psutil.Process] = psutil.Process(self.process.pid).children(recursive=True)
        return tree

    def stop(self, signum: signal.Signals) -> int:
        """Send ``signum``; return the exit code once every process of the stack is gone."""
        tree = self.tree()
        self.process.send_signal(signum)
        code = self.process.wait(timeout=STOP_DEADLINE_S)
        left = [proc for proc in tree if not is_gone(proc)]
        assert not left, f"still running after {signum.name}: {left}\n{self.output()}"
        return code


@contextmanager
def jetspark_up(home: Path, *args: str) -> Iterator[Stack]:
    port = free_port()
    out, err = home.parent / f"up-{port}.out", home.parent / f"up-{port}.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [JETSPARK, "up", "--port", str(port), *args],
            env=process_env(JETSPARK_HOME=str(home), JETSPARK_SPARK_MASTER="local[2]"),
            cwd=home.parent,
            stdout=stdout,
            stderr=stderr,
        )
    stack = Stack(process, f"http://127.0.0.1:{port}", home, out, err)
    try:
        poll(lambda: _ready(stack), deadline_s=READY_DEADLINE_S, what="/readyz 200")
        yield stack
    finally:
        if process.poll() is None:  # the test failed before stopping it
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_DEADLINE_S)
            except subprocess.TimeoutExpired:
                process.kill()


def _ready(stack: Stack) -> bool:
    assert stack.process.poll() is None, f"jetspark up exited early\n{stack.output()}"
    try:
        return httpx.get(f"{stack.url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def cli(stack: Stack, *args: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    """The console script as a user runs it: URL given, token from the home `up` wrote."""
    return subprocess.run(
        [JETSPARK, *args, "--url", stack.url],
        env=process_env(JETSPARK_HOME=str(stack.home)),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def command_lines(procs: list[psutil.Process]) -> list[str]:
    lines = []
    for proc in procs:
        try:
            lines.append(" ".join(proc.cmdline()))
        except psutil.Error:  # exited (or a zombie) since the listing
            continue
    return lines


def expected_counts() -> dict[str, int]:
    body = json.loads(EXAMPLE.read_text())
    lines = [item["line"] for item in body["dag"]["vertices"][0]["params"]["items"]]
    return dict(Counter(word for line in lines for word in line.split()))


def test_up_runs_a_job_stops_cleanly_and_keeps_it(jetspark_home: Path) -> None:
    with jetspark_up(jetspark_home, "--workers", "1") as stack:
        token_file = jetspark_home / "token"
        token = token_file.read_text().strip()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        banner = poll(
            lambda: stack.stdout.read_text() if "Ctrl-C" in stack.stdout.read_text() else None,
            deadline_s=10,
            what="the banner",
        )
        assert f"{stack.url}/docs" in banner and f"{stack.url}/" in banner and token in banner

        submitted = cli(stack, "submit", str(EXAMPLE), "--wait", timeout_s=JOB_DEADLINE_S)
        assert submitted.returncode == 0, f"{submitted.stderr}\n{stack.output()}"
        job_id = submitted.stdout.strip()
        assert submitted.stderr.strip().splitlines()[-1].split()[0] == "COMPLETED"
        results = httpx.get(
            f"{stack.url}/v1/jobs/{job_id}/results",
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        ).json()["items"]
        assert {item["key"]: item["count"] for item in results} == expected_counts()

        poll(
            lambda: "worker-1 ready: Spark is warm" in stack.stderr.read_text(),
            deadline_s=10,
            what="up saying the worker is warm",
        )
        names = command_lines(stack.tree())
        assert any("launcher api" in name for name in names), names
        # ``jetspark worker`` execs the worker program (named by ``launcher`` alone)
        assert any("-m worker.main" in name for name in names), names
        assert any("java" in name for name in names), names  # the worker's Spark JVM
        # a worker runs hostile DAGs: it never gets the API's tokens (issue 11)
        for proc in stack.tree():
            try:
                cmdline, env = " ".join(proc.cmdline()), proc.environ()
            except psutil.Error:
                continue
            if "-m worker.main" in cmdline or "java" in cmdline:
                assert "JETSPARK_API_TOKENS" not in env, cmdline
                assert not any(token in value for value in env.values()), cmdline
            if "launcher api" in cmdline:
                assert env.get("JETSPARK_API_TOKENS") == token
        assert stack.stop(signal.SIGINT) == 0, stack.output()
        assert not (jetspark_home / "postgres" / "postmaster.pid").exists()

    # Again on the same home, without a worker this time: the first run's job is there.
    with jetspark_up(jetspark_home, "--workers", "0") as again:
        assert (jetspark_home / "token").read_text().strip() == token
        listed = cli(again, "jobs")
        assert listed.returncode == 0, listed.stderr
        rows = [line.split() for line in listed.stdout.splitlines()[1:]]
        assert [job_id, "word-count", "COMPLETED"] in [row[:3] for row in rows]
        assert again.stop(signal.SIGTERM) == 0, again.output()


def test_up_refuses_a_port_in_use_in_one_line(jetspark_home: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [JETSPARK, "up", "--port", str(port)],
            env=process_env(JETSPARK_HOME=str(jetspark_home)),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is already in use (choose another with --port)"
    ]
    assert not jetspark_home.exists()  # refused before anything started


def test_up_without_java_says_so_in_one_line(jetspark_home: Path, tmp_path: Path) -> None:
    no_java = tmp_path / "bin"
    no_java.mkdir()
    env = process_env(JETSPARK_HOME=str(jetspark_home), PATH=str(no_java))
    env.pop("JAVA_HOME", None)
    done = subprocess.run(
        [JETSPARK, "up", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("error: java not found")
    assert os.environ.get("PATH")  # (the test's own PATH is untouched)


def api_processes(stack: Stack) -> list[psutil.Process]:
    found = []
    for proc in stack.tree():
        if any("launcher api" in line for line in command_lines([proc])):
            found.append(proc)
    return found


def test_a_dead_child_is_restarted_and_counted(jetspark_home: Path) -> None:
    with jetspark_up(jetspark_home, "--workers", "0") as stack:
        (first,) = api_processes(stack)
        first.kill()
        poll(
            lambda: _ready(stack) and [p for p in api_processes(stack) if p.pid != first.pid],
            deadline_s=READY_DEADLINE_S,
            what="the API started again",
        )
        scraped = httpx.get(f"{stack.url}/metrics", timeout=10).text
        assert 'jetspark_supervisor_restarts_total{child="api"} 1.0' in scraped
        assert "restarting in" in stack.stderr.read_text()
        assert stack.stop(signal.SIGTERM) == 0, stack.output()


def test_a_child_that_keeps_dying_is_named_and_everything_stops(jetspark_home: Path) -> None:
    with jetspark_up(jetspark_home, "--workers", "0") as stack:
        tree = stack.tree()
        killed: set[int] = set()

        def kill_the_api() -> bool:
            for proc in api_processes(stack) if stack.process.poll() is None else []:
                if proc.pid not in killed:
                    killed.add(proc.pid)
                    proc.kill()
            return stack.process.poll() is not None

        poll(kill_the_api, deadline_s=STOP_DEADLINE_S * 2, what="up gave up on the API")
        assert stack.process.wait(timeout=STOP_DEADLINE_S) == 1, stack.output()
        assert all(is_gone(proc) for proc in tree), stack.output()
        errors = [line for line in stack.stderr.read_text().splitlines() if "error" in line]
        assert len(errors) == 1, stack.output()
        assert errors[0].startswith("error: api (pid ")
        assert "(5 times in 60 s)" in errors[0]
        assert not (jetspark_home / "postgres" / "postmaster.pid").exists()


def test_up_refuses_bad_spark_properties_before_starting_anything(jetspark_home: Path) -> None:
    done = subprocess.run(
        [JETSPARK, "up", "--port", str(free_port())],
        env=process_env(JETSPARK_HOME=str(jetspark_home), JETSPARK_SPARK_CONF='{"spark.x": null}'),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: JETSPARK_SPARK_CONF: 'spark.x' must be a string, number or boolean, not NoneType"
    ]
    assert not jetspark_home.exists()


def test_a_worker_spark_refuses_stops_the_stack_at_once_in_one_line(jetspark_home: Path) -> None:
    """A property only Spark can judge: the worker exits 78 once, and `up` does not restart
    it in a loop of tracebacks."""
    port = free_port()
    done = subprocess.run(
        [JETSPARK, "up", "--port", str(port), "--workers", "1"],
        env=process_env(
            JETSPARK_HOME=str(jetspark_home),
            JETSPARK_SPARK_MASTER="local[1]",
            JETSPARK_SPARK_CONF='{"spark.sql.shuffle.partitions": "many"}',
        ),
        capture_output=True,
        text=True,
        timeout=READY_DEADLINE_S + STOP_DEADLINE_S,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith("error: worker-1 (pid ")
    assert "exited with code 78" in errors[0]
    assert "(a setting it cannot use)" in errors[0]
    assert '"spark.sql.shuffle.partitions" is invalid' in errors[0]
    assert "restarting" not in done.stderr
    assert not (jetspark_home / "postgres" / "postmaster.pid").exists()
