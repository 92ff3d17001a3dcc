"""Where ``source.files`` may read and ``sink.files`` may write: under the data roots only.

A path is resolved (``file:`` URIs, ``..``, symlinks) before it is compared with the roots
(``JETSPARK_DATA_ROOTS``); globs are refused, since what they match is decided later. Other
URI schemes are refused unless an operator lists them (``JETSPARK_DATA_SCHEMES``) with a root
of that scheme. The API checks at validation; the worker checks again, and also each file
a directory holds (a symlink inside a root may point out of it), just before Spark reads.
A sink writes only into a directory jetspark created for that job, marked by ``MARKER``.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
from dataclasses import dataclass
from urllib.parse import urlsplit

from jetspark.settings import DataSettings

MARKER = ".jetspark-sink"
"""The file in each directory a ``sink.files`` job created; it holds the job's owner tag."""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_GLOB = re.compile(r"[*?\[\]{}\\]")


class PathRefused(ValueError):
    """A data path outside the roots, of a scheme not allowed, or otherwise refused."""


@dataclass(frozen=True)
class DataPath:
    """A checked path: ``location`` is a resolved local path (scheme ``file``) or a URI."""

    scheme: str
    location: str

    @property
    def local(self) -> bool:
        return self.scheme == "file"


def _local_path(path: str) -> str:
    if path.startswith("file:"):
        parts = urlsplit(path)
        if parts.netloc not in ("", "localhost"):
            raise PathRefused(f"{path!r}: a file: URI names no host")
        path = parts.path
    if not os.path.isabs(path):
        raise PathRefused(f"{path!r}: a path must be absolute")
    return os.path.realpath(path)


def _scheme(path: str) -> str:
    match = _SCHEME.match(path)
    return match.group(1).lower() if match else "file"


def _under(location: str, root: str) -> bool:
    return location == root or location.startswith(root.rstrip("/") + "/")


def check_path(path: str, settings: DataSettings | None = None) -> DataPath:
    """``path`` resolved and found under a data root; ``PathRefused`` saying why not."""
    settings = settings or DataSettings()
    if "\x00" in path:
        raise PathRefused("a path cannot hold a NUL")
    if _GLOB.search(path):
        raise PathRefused(f"{path!r}: glob patterns are not allowed; name a file or directory")
    scheme = _scheme(path)
    if scheme not in {s.lower() for s in settings.schemes}:
        raise PathRefused(f"{path!r}: the {scheme}: scheme is not allowed (JETSPARK_DATA_SCHEMES)")
    roots = settings.root_list()
    if scheme == "file":
        location = _local_path(path)
        local_roots = [_local_path(r) for r in roots if _scheme(r) == "file"]
        if not any(_under(location, root) for root in local_roots):
            raise PathRefused(f"{path!r}: not under a data root (JETSPARK_DATA_ROOTS)")
        return DataPath("file", location)
    parts = urlsplit(path)
    if ".." in parts.path.split("/"):
        raise PathRefused(f"{path!r}: '..' is not allowed")
    location = f"{scheme}://{parts.netloc}{posixpath.normpath(parts.path or '/')}"
    allowed = [r for r in roots if r.lower().startswith(f"{scheme}://")]
    if not any(_under(location, r.rstrip("/")) for r in allowed):
        raise PathRefused(f"{path!r}: not under a data root of the {scheme}: scheme")
    return DataPath(scheme, location)


def readable_files(checked: DataPath, settings: DataSettings | None = None) -> list[str]:
    """The files Spark may read for ``checked``: the file itself, or every visible file under
    the directory, each resolved again and required under a root. A URI of another scheme
    is read as it is (its store has no symlinks)."""
    if not checked.local:
        return [checked.location]
    if os.path.isfile(checked.location):
        return [checked.location]
    files: list[str] = []
    for folder, dirs, names in os.walk(checked.location):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(names):
            if name.startswith((".", "_")):
                continue
            # a symlink in the tree is resolved and checked like the path itself
            files.append(check_path(os.path.join(folder, name), settings).location)
    return files


def prepare_sink(checked: DataPath, owner: str, *, empty: bool = True) -> None:
    """Make ``checked`` a directory this job owns and (``empty``) remove what it wrote before.

    A directory that exists without this job's marker is refused: jetspark never deletes or
    overwrites what it did not create for the job."""
    if not checked.local:
        raise PathRefused(f"{checked.location!r}: sink.files writes to local paths only")
    marker = os.path.join(checked.location, MARKER)
    if os.path.lexists(checked.location):
        if not os.path.isdir(checked.location) or not _owned(marker, owner):
            raise PathRefused(
                f"{checked.location!r} exists and was not created by this job; "
                "sink.files writes only into a directory it creates"
            )
        if not empty:
            return
        for name in os.listdir(checked.location):
            if name == MARKER:
                continue
            entry = os.path.join(checked.location, name)
            if os.path.isdir(entry) and not os.path.islink(entry):
                shutil.rmtree(entry)
            else:
                os.unlink(entry)
        return
    os.makedirs(checked.location)
    with open(marker, "x", encoding="utf-8") as file:
        file.write(owner)


def _owned(marker: str, owner: str) -> bool:
    if not os.path.isfile(marker) or os.path.islink(marker):
        return False
    with open(marker, encoding="utf-8") as file:
        return file.read() == owner
