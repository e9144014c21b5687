"""Hand a program's in-memory files to a workspace.

:class:`VirtualFileSystem` is the interface of a file set a host program
holds (the seed SDK's ``read_file``/``write_file``/``exists``/``stat``/
``readdir``); :class:`MemoryFS` is one kept in a dict. :func:`mount` puts
such a file set into a workspace under a directory, atomically (one tar
import: every file lands or none does), where the agent's tools, exec,
FUSE and every other door see it; :func:`sync_back` reads the directory
back into a writable file set after the agent worked on it.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Union

if TYPE_CHECKING:
    from .client import Workspace


@dataclass
class FileStat:
    type: str  # "file" or "dir"
    size: int


@dataclass
class DirEntry:
    name: str
    type: str  # "file" or "dir"


def _norm(path: str) -> str:
    p = posixpath.normpath("/" + path.replace("\\", "/")).lstrip("/")
    return "" if p == "." else p


class VirtualFileSystem(ABC):
    """A file tree a host program holds."""

    writable = False

    @abstractmethod
    def read_file(self, path: str) -> bytes: ...

    @abstractmethod
    def write_file(self, path: str, data: bytes) -> None: ...

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def stat(self, path: str) -> FileStat: ...

    @abstractmethod
    def readdir(self, path: str) -> List[DirEntry]: ...

    def to_flat_files(self) -> Dict[str, bytes]:
        """Every file, by path relative to the root."""
        out: Dict[str, bytes] = {}

        def walk(d: str) -> None:
            for e in self.readdir(d):
                p = posixpath.join(d, e.name) if d else e.name
                if e.type == "dir":
                    walk(p)
                else:
                    out[p] = self.read_file(p)

        walk("")
        return out


class MemoryFS(VirtualFileSystem):
    """Files kept in a dict of path → bytes (str values are UTF-8 encoded).
    Directories are implied by the paths."""

    def __init__(self, files: Dict[str, Union[bytes, str]], *, writable: bool = False):
        self.files: Dict[str, bytes] = {}
        for p, data in files.items():
            n = _norm(p)
            if not n:
                raise ValueError(f"not a file path: {p!r}")
            self.files[n] = data.encode() if isinstance(data, str) else bytes(data)
        self.writable = writable

    def _dirs(self) -> set:
        dirs = {""}
        for p in self.files:
            while "/" in p:
                p = p.rsplit("/", 1)[0]
                dirs.add(p)
        return dirs

    def read_file(self, path: str) -> bytes:
        try:
            return self.files[_norm(path)]
        except KeyError:
            raise FileNotFoundError(path) from None

    def write_file(self, path: str, data: bytes) -> None:
        if not self.writable:
            raise PermissionError(f"read-only file set: {path}")
        n = _norm(path)
        if not n or n in self._dirs():
            raise IsADirectoryError(path)
        self.files[n] = bytes(data)

    def exists(self, path: str) -> bool:
        n = _norm(path)
        return n in self.files or n in self._dirs()

    def stat(self, path: str) -> FileStat:
        n = _norm(path)
        if n in self.files:
            return FileStat("file", len(self.files[n]))
        if n in self._dirs():
            return FileStat("dir", 0)
        raise FileNotFoundError(path)

    def readdir(self, path: str) -> List[DirEntry]:
        n = _norm(path)
        if n not in self._dirs():
            raise FileNotFoundError(path)
        prefix = n + "/" if n else ""
        names: Dict[str, str] = {}
        for p in self.files:
            if p.startswith(prefix):
                head, sep, _ = p[len(prefix):].partition("/")
                names[head] = "dir" if sep else "file"
        return [DirEntry(k, names[k]) for k in sorted(names)]


def mount(workspace: "Workspace", path: str, fs: VirtualFileSystem) -> int:
    """Put every file of ``fs`` into ``workspace`` under directory ``path``
    (created if missing), in one atomic import; returns the number of files.
    A snapshot: later changes to ``fs`` need another mount, and the
    agent's changes come back with :func:`sync_back`."""
    files = fs.to_flat_files()
    buf = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for p in sorted(files):
            info = tarfile.TarInfo(p)
            info.size = len(files[p])
            info.mode = 0o644
            info.mtime = now
            tar.addfile(info, io.BytesIO(files[p]))
    dest = path.strip("/")
    if dest:
        workspace.mkdir(dest, parents=True)
    workspace.import_tar(buf.getvalue(), to=dest)
    return len(files)


def sync_back(workspace: "Workspace", path: str, fs: MemoryFS) -> Dict[str, List[str]]:
    """Read directory ``path`` of ``workspace`` back into the writable file
    set ``fs``: files added or changed there are written into ``fs``, files
    deleted there are dropped from it. Returns the paths by kind."""
    if not fs.writable:
        raise PermissionError("sync_back needs a writable MemoryFS")
    buf = io.BytesIO()
    workspace.export_tar(buf, path.strip("/"))
    buf.seek(0)
    seen: Dict[str, bytes] = {}
    with tarfile.open(fileobj=buf, mode="r") as tar:
        for m in tar:
            if not m.isfile():
                continue
            n = _norm(m.name)
            f = tar.extractfile(m)
            if n and f is not None:
                seen[n] = f.read()
    report: Dict[str, List[str]] = {"added": [], "changed": [], "deleted": []}
    for p in sorted(set(fs.files) | set(seen)):
        if p not in seen:
            report["deleted"].append(p)
            del fs.files[p]
        elif p not in fs.files:
            report["added"].append(p)
            fs.files[p] = seen[p]
        elif fs.files[p] != seen[p]:
            report["changed"].append(p)
            fs.files[p] = seen[p]
    return report
