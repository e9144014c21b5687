"""The forkspace HTTP API client: stores, workspaces, files, checkpoints,
forks, diffs, merges, exec and the change feed.

Everything is synchronous and streams: uploads read from a file object in
chunks, downloads write into one, so files of any size pass through a
bounded amount of memory.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Dict, Iterator, List, Optional, Union

from .errors import Conflict, ConnectionFailed, ForkspaceError, error_for

DEFAULT_SERVER = "http://127.0.0.1:7777"
CHUNK = 1 << 20

Body = Union[bytes, str, BinaryIO, None]


def _quote_path(p: str) -> str:
    return "/".join(urllib.parse.quote(seg, safe="") for seg in p.split("/") if seg)


@dataclass
class Entry:
    """One file tree entry (what stat and listings return)."""

    name: str
    path: str
    type: str  # "file", "dir", "symlink", ...
    mode: str
    size: int
    mtime: str
    etag: str = ""
    target: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Entry":
        return cls(name=d.get("name", ""), path=d.get("path", ""), type=d.get("type", ""), mode=d.get("mode", ""),
                   size=d.get("size", 0), mtime=d.get("mtime", ""), etag=d.get("etag", ""),
                   target=d.get("target", ""), raw=d)


@dataclass
class ExecResult:
    """How an exec ended: exit code, output, and what it changed."""

    exit_code: int
    stdout: str
    stderr: str
    changed: List[Dict[str, Any]]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ExecResult":
        return cls(exit_code=d.get("exit_code", 0), stdout=d.get("stdout", ""), stderr=d.get("stderr", ""),
                   changed=d.get("changed") or [], raw=d)


@dataclass
class Event:
    """One change-feed event: its sequence number and what it says changed."""

    id: str
    type: str
    data: Dict[str, Any]


class Client:
    """A connection to a forkspace server.

    ``url`` defaults to ``$FORKSPACE_SERVER`` or http://127.0.0.1:7777;
    ``token`` to ``$FORKSPACE_TOKEN`` (sent as ``Authorization: Bearer``,
    never in a URL). A Client may be shared by threads: each thread keeps
    its own keep-alive connection.
    """

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, *, timeout: float = 60.0,
                 actor: str = "python"):
        url = url or os.environ.get("FORKSPACE_SERVER") or DEFAULT_SERVER
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"forkspace server URL must be http(s)://HOST[:PORT], not {url!r}")
        self.url = f"{u.scheme}://{u.netloc}"
        self._scheme, self._host, self._port = u.scheme, u.hostname, u.port
        self.token = token if token is not None else os.environ.get("FORKSPACE_TOKEN", "")
        self.timeout = timeout
        self.actor = actor
        self._local = threading.local()

    # ---- transport -----------------------------------------------------

    def _conn(self, fresh: bool = False) -> http.client.HTTPConnection:
        c = getattr(self._local, "conn", None)
        if c is None or fresh:
            if c is not None:
                c.close()
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            c = cls(self._host, self._port, timeout=self.timeout)
            self._local.conn = c
        return c

    def _headers(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        h = {"X-Forkspace-Actor": self.actor}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if extra:
            h.update(extra)
        return h

    def request(self, method: str, path: str, *, query: Optional[Dict[str, Any]] = None, json_body: Any = None,
                body: Body = None, headers: Optional[Dict[str, str]] = None,
                stream: bool = False) -> http.client.HTTPResponse:
        """Send one request and return the response (raising the API's error
        for a status of 400 or more). With ``stream`` the caller reads and
        closes the response; otherwise it must be read whole before the next
        request on this thread."""
        if query:
            q = {k: v for k, v in query.items() if v is not None and v != ""}
            if q:
                path += "?" + urllib.parse.urlencode(q)
        hdrs = self._headers(headers)
        if json_body is not None:
            body = json.dumps(json_body).encode()
            hdrs["Content-Type"] = "application/json"
        if isinstance(body, str):
            body = body.encode()
        rewindable = body is None or isinstance(body, bytes)
        if body is not None and not isinstance(body, bytes):
            hdrs["Transfer-Encoding"] = "chunked"
        for attempt in (0, 1):
            conn = self._conn(fresh=attempt == 1 or stream)
            try:
                if body is None or isinstance(body, bytes):
                    conn.request(method, path, body=body, headers=hdrs)
                else:
                    conn.request(method, path, body=_chunks(body), headers=hdrs, encode_chunked=True)
                resp = conn.getresponse()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                # A kept-alive connection the server closed: retry once on a
                # fresh one if the body can be sent again.
                conn.close()
                self._local.conn = None
                if attempt == 1 or not rewindable:
                    raise ConnectionFailed(f"{method} {path}: {e}") from e
            except OSError as e:
                conn.close()
                self._local.conn = None
                raise ConnectionFailed(f"cannot reach forkspace at {self.url}: {e}") from e
        if stream:
            self._local.conn = None  # the response owns the connection now
        if resp.status >= 400:
            raw = resp.read()
            if stream:
                resp.close()
            raise _error(resp.status, raw)
        return resp

    def call(self, method: str, path: str, **kw: Any) -> Any:
        """Send one request and decode its JSON reply (None for 204)."""
        resp = self.request(method, path, **kw)
        raw = resp.read()
        if resp.status == 204 or not raw:
            return None
        if "json" in (resp.getheader("Content-Type") or ""):
            return json.loads(raw)
        return raw.decode()

    # ---- workspaces ------------------------------------------------------

    def workspaces(self, *, page_size: int = 500) -> Iterator[Dict[str, Any]]:
        """Every workspace the token sees, by name (paged transparently)."""
        cursor = ""
        while True:
            page = self.call("GET", "/v1/workspaces", query={"limit": page_size, "cursor": cursor})
            yield from page.get("workspaces") or []
            cursor = page.get("next") or ""
            if not cursor:
                return

    def create_workspace(self, name: str, *, max_bytes: int = 0, max_entries: int = 0,
                         mounts: Optional[List[str]] = None) -> "Workspace":
        body: Dict[str, Any] = {"name": name}
        if max_bytes or max_entries:
            body["quota"] = {"max_bytes": max_bytes, "max_entries": max_entries}
        if mounts:
            body["mounts"] = mounts
        self.call("POST", "/v1/workspaces", json_body=body)
        return Workspace(self, name)

    def workspace(self, name: str) -> "Workspace":
        """A handle on workspace ``name`` (or ``name@checkpoint``, read-only);
        nothing is sent until it is used."""
        return Workspace(self, name)

    def diff(self, from_state: str, to_state: str, *, unified: bool = False) -> Union[List[Dict[str, Any]], str]:
        """The changes from one state to another: a list of changes, or
        unified text."""
        q = {"from": from_state, "to": to_state}
        if unified:
            q["format"] = "unified"
        return self.call("GET", "/v1/diff", query=q)

    def audit(self, workspace: str = "", *, limit: int = 100, before: int = 0) -> List[Dict[str, Any]]:
        return self.call("GET", "/v1/audit", query={"workspace": workspace, "limit": limit, "before": before or None})

    def gc(self, *, dry_run: bool = True, grace_seconds: float = 0) -> Dict[str, Any]:
        return self.call("POST", "/v1/gc", json_body={"dry_run": dry_run, "grace_ns": int(grace_seconds * 1e9)})

    def fsck(self) -> Dict[str, Any]:
        return self.call("POST", "/v1/fsck")

    def df(self) -> Dict[str, Any]:
        return self.call("GET", "/v1/df")


def _chunks(f: BinaryIO) -> Iterator[bytes]:
    while True:
        b = f.read(CHUNK)
        if not b:
            return
        yield b


def _error(status: int, raw: bytes) -> ForkspaceError:
    try:
        e = json.loads(raw)
        return error_for(status, e.get("code", ""), e.get("message", ""), e.get("path", ""))
    except (ValueError, AttributeError):
        return error_for(status, "", raw.decode(errors="replace").strip())


class Workspace:
    """One workspace (or, named ``NAME@CHECKPOINT``, a read-only state of one)."""

    def __init__(self, client: Client, name: str):
        self.client = client
        self.name = name
        self._base = "/v1/workspaces/" + urllib.parse.quote(name, safe="@")

    def __repr__(self) -> str:
        return f"Workspace({self.name!r})"

    def _path(self, kind: str, p: str) -> str:
        return f"{self._base}/{kind}/{_quote_path(p)}"

    # ---- identity, lifecycle ------------------------------------------------

    def info(self) -> Dict[str, Any]:
        return self.client.call("GET", self._base)

    def delete(self) -> None:
        self.client.call("DELETE", self._base)

    def fork(self, name: str, *, max_bytes: int = 0, max_entries: int = 0) -> "Workspace":
        body: Dict[str, Any] = {"name": name}
        if max_bytes or max_entries:
            body["quota"] = {"max_bytes": max_bytes, "max_entries": max_entries}
        self.client.call("POST", self._base + "/fork", json_body=body)
        return Workspace(self.client, name)

    def parent(self) -> str:
        """The state this workspace was forked from."""
        return self.client.call("GET", self._base + "/parent")["state"]

    # ---- checkpoints, diffs, merges -------------------------------------------

    def checkpoints(self) -> List[Dict[str, Any]]:
        return self.client.call("GET", self._base + "/checkpoints") or []

    def checkpoint(self, label: str = "") -> Dict[str, Any]:
        return self.client.call("POST", self._base + "/checkpoints", json_body={"label": label})

    def restore(self, checkpoint: str) -> None:
        self.client.call("POST", self._base + "/restore", json_body={"checkpoint": checkpoint})

    def at(self, checkpoint: str) -> "Workspace":
        """The read-only state ``NAME@checkpoint``."""
        return Workspace(self.client, self.name.split("@")[0] + "@" + checkpoint)

    def diff(self, other: str, *, unified: bool = False) -> Union[List[Dict[str, Any]], str]:
        """The changes from state ``other`` to this one."""
        return self.client.diff(other, self.name, unified=unified)

    def _merge_call(self, route: str, body: Dict[str, Any]) -> Dict[str, Any]:
        reply = self.client.call("POST", self._base + route, json_body=body)
        result = reply.get("result") or {}
        for k in ("changed", "conflicts"):
            if result.get(k) is None:
                result[k] = []
        if reply.get("stopped"):
            err = Conflict(f"{route.strip('/')} stopped: {reply['stopped']}; nothing changed", code="conflict")
            err.result = result  # type: ignore[attr-defined]
            raise err
        return result

    def merge(self, from_state: str, *, policy: str = "", base: str = "") -> Dict[str, Any]:
        """Three-way merge of ``from_state`` into this workspace; returns the
        merge (changed paths, conflicts, the checkpoint taken first).
        ``policy``: "" (conflicts recorded as data, the default), fail
        (raise Conflict and change nothing when any), ours, theirs."""
        return self._merge_call("/merge", _omit_empty({"from": from_state, "base": base, "policy": policy}))

    def cherry_pick(self, from_state: str, paths: List[str], *, changes: bool = False,
                    policy: str = "") -> Dict[str, Any]:
        """Bring ``paths`` (or, with ``changes``, the changes under them) from
        any state into this workspace."""
        return self._merge_call("/cherry-pick", _omit_empty({"from": from_state, "paths": paths, "changes": changes, "policy": policy}))

    def restore_paths(self, checkpoint: str, paths: List[str]) -> Dict[str, Any]:
        """Restore only ``paths`` from a checkpoint."""
        return self._merge_call("/restore-paths", {"checkpoint": checkpoint, "paths": paths})

    def conflicts(self) -> List[Dict[str, Any]]:
        return self.client.call("GET", self._base + "/conflicts") or []

    def resolve(self, path: str, take: str, content: Optional[bytes] = None) -> int:
        """Settle one conflict (``take``: ours, theirs, markers, content);
        returns how many are left."""
        body: Dict[str, Any] = {"path": path, "take": take}
        if content is not None:
            body["content"] = base64.b64encode(content).decode()
        return self.client.call("POST", self._base + "/resolve", json_body=body)["conflicts_left"]

    # ---- files ------------------------------------------------------------

    def stat(self, path: str) -> Entry:
        return Entry.from_json(self.client.call("GET", self._path("stat", path)))

    def exists(self, path: str) -> bool:
        from .errors import NotFound

        try:
            self.stat(path)
            return True
        except NotFound:
            return False

    def listdir(self, path: str = "", *, page_size: int = 1000) -> Iterator[Entry]:
        """The entries of a directory, by name (paged transparently)."""
        cursor = ""
        while True:
            page = self.client.call("GET", self._path("dir", path), query={"limit": page_size, "cursor": cursor})
            for e in page.get("entries") or []:
                yield Entry.from_json(e)
            cursor = page.get("next") or ""
            if not cursor:
                return

    @staticmethod
    def _range(offset: int, length: Optional[int]) -> Dict[str, str]:
        if not offset and length is None:
            return {}
        end = "" if length is None else str(offset + length - 1)
        return {"Range": f"bytes={offset}-{end}"}

    def open(self, path: str, *, offset: int = 0, length: Optional[int] = None) -> http.client.HTTPResponse:
        """A streaming reader of a file (or of a byte range of it) on a
        connection of its own. Close it when done (it is a context manager)."""
        return self.client.request("GET", self._path("files", path), headers=self._range(offset, length), stream=True)

    def read_bytes(self, path: str, *, offset: int = 0, length: Optional[int] = None) -> bytes:
        """A whole file (or a byte range of it) in memory, over the thread's
        kept-alive connection; use open or download for large files."""
        return self.client.request("GET", self._path("files", path), headers=self._range(offset, length)).read()

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read_bytes(path).decode(encoding)

    def download(self, path: str, dest: Union[str, BinaryIO]) -> int:
        """Stream a file into ``dest`` (a local path or a binary file);
        returns the bytes written."""
        n = 0
        with self.open(path) as r:
            out = open(dest, "wb") if isinstance(dest, str) else dest
            try:
                while True:
                    b = r.read(CHUNK)
                    if not b:
                        break
                    out.write(b)
                    n += len(b)
            finally:
                if isinstance(dest, str):
                    out.close()
        return n

    def write(self, path: str, data: Body, *, mode: int = 0o644, if_match: str = "",
              create_only: bool = False) -> Entry:
        """Replace a file whole with ``data`` (bytes, text or a binary file
        read in chunks; any size), atomically: on any error nothing changes.
        ``if_match`` (an ETag) and ``create_only`` make it conditional
        (PreconditionFailed when they do not hold)."""
        headers = {}
        if if_match:
            headers["If-Match"] = if_match
        if create_only:
            headers["If-None-Match"] = "*"
        if data is None:
            data = b""
        return Entry.from_json(self.client.call("PUT", self._path("files", path), query={"mode": f"{mode:04o}"},
                                                body=data, headers=headers))

    def write_text(self, path: str, text: str, **kw: Any) -> Entry:
        return self.write(path, text.encode(), **kw)

    def upload(self, local: str, path: str, **kw: Any) -> Entry:
        """Stream a local file into the workspace."""
        with open(local, "rb") as f:
            return self.write(path, f, **kw)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        self.client.call("DELETE", self._path("files", path), query={"recursive": "true" if recursive else None})

    def rename(self, src: str, dst: str) -> None:
        self.client.call("POST", self._base + "/rename", json_body={"from": src, "to": dst})

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        self.client.call("POST", self._base + "/mkdir", json_body={"path": path, "parents": parents})

    def glob(self, pattern: str, *, path: str = "", limit: int = 0) -> str:
        return self.client.call("POST", self._base + "/glob", json_body={"pattern": pattern, "path": path, "limit": limit})["text"]

    def grep(self, pattern: str, *, path: str = "", glob: str = "", literal: bool = False,
             ignore_case: bool = False, context: int = 0, max_results: int = 0) -> str:
        return self.client.call("POST", self._base + "/grep", json_body={
            "pattern": pattern, "path": path, "glob": glob, "literal": literal, "ignore_case": ignore_case,
            "context": context, "max_results": max_results})["text"]

    # ---- archives ------------------------------------------------------------

    def import_tar(self, tar: Union[bytes, BinaryIO], to: str = "") -> Dict[str, Any]:
        """Unpack a tar archive (plain or gzip) into directory ``to``,
        atomically."""
        return self.client.call("POST", self._base + "/import", query={"to": to}, body=tar,
                                headers={"Content-Type": "application/x-tar"})

    def export_tar(self, dest: BinaryIO, path: str = "") -> None:
        """Stream a tar archive of a directory (or file) into ``dest``."""
        with self.client.request("GET", self._base + "/export", query={"from": path}, stream=True) as r:
            while True:
                b = r.read(CHUNK)
                if not b:
                    return
                dest.write(b)

    # ---- exec, mounts, the change feed -------------------------------------------

    def exec(self, command: str, *, env: Optional[Dict[str, str]] = None, timeout: Optional[float] = None,
             network: bool = False, on_stdout: Optional[Callable[[bytes], None]] = None,
             on_stderr: Optional[Callable[[bytes], None]] = None) -> ExecResult:
        """Run a shell command in the workspace's sandbox. Output streams to
        the callbacks as it comes; the result says how it ended and what it
        changed."""
        req: Dict[str, Any] = {"command": command}
        if env:
            req["env"] = env
        if timeout:
            req["timeout"] = int(timeout * 1e9)
        if network:
            req["network"] = True
        with self.client.request("POST", self._base + "/exec", json_body=req, stream=True) as r:
            for line in r:
                ev = json.loads(line)
                if "stdout" in ev and on_stdout:
                    on_stdout(base64.b64decode(ev["stdout"]))
                elif "stderr" in ev and on_stderr:
                    on_stderr(base64.b64decode(ev["stderr"]))
                elif "result" in ev:
                    return ExecResult.from_json(ev["result"])
                elif "error" in ev:
                    e = ev["error"]
                    if isinstance(e, dict):
                        raise error_for(0, e.get("code", ""), e.get("message", ""), e.get("path", ""))
                    raise ForkspaceError(str(e))
        raise ForkspaceError("exec: the server ended the stream without a result")

    def mounts(self) -> List[Dict[str, Any]]:
        return self.client.call("GET", self._base + "/mounts") or []

    def mount_action(self, action: str, root: str = "") -> None:
        """flush, refresh or prefetch one mount root (every mount if none)."""
        self.client.call("POST", f"{self._base}/mounts/{action}", json_body={"root": root})

    def events(self, *, since: str = "", timeout: Optional[float] = None) -> Iterator[Event]:
        """The workspace's change feed (Server-Sent Events): every change
        after event ``since`` (or from now), as it happens. Stops when
        ``timeout`` seconds pass without an event."""
        headers = {"Accept": "text/event-stream"}
        if since:
            headers["Last-Event-ID"] = since
        r = self.client.request("GET", self._base + "/events", headers=headers, stream=True)
        if timeout is not None and r.fp is not None:
            r.fp.raw._sock.settimeout(timeout)  # type: ignore[union-attr]
        try:
            ev_id, ev_type, data = "", "message", []
            while True:
                try:
                    line = r.readline()
                except (TimeoutError, OSError):
                    return
                if not line:
                    return
                line = line.decode().rstrip("\r\n")
                if line == "":
                    if data:
                        payload = "\n".join(data)
                        try:
                            parsed = json.loads(payload)
                        except ValueError:
                            parsed = {"data": payload}
                        yield Event(id=ev_id, type=ev_type, data=parsed if isinstance(parsed, dict) else {"data": parsed})
                    ev_type, data = "message", []
                    continue
                if line.startswith(":"):
                    continue
                key, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if key == "id":
                    ev_id = value
                elif key == "event":
                    ev_type = value
                elif key == "data":
                    data.append(value)
        finally:
            r.close()

    def watch(self, path: str = "", *, timeout: float = 30.0, since: str = "") -> List[Event]:
        """Wait up to ``timeout`` seconds for changes under ``path``; return
        the events that named such a change (empty on timeout)."""
        prefix = path.strip("/")
        for ev in self.events(since=since, timeout=timeout):
            paths = _event_paths(ev.data)
            if ev.type in ("reset", "too_old") or not prefix or any(p == prefix or p.startswith(prefix + "/") for p in paths):
                return [ev]
        return []


def _omit_empty(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v not in ("", None, False)}


def _event_paths(d: Dict[str, Any]) -> List[str]:
    out: List[str] = []
    for k in ("changed", "paths"):
        v = d.get(k)
        if isinstance(v, list):
            out += [str(p).lstrip("/") for p in v]
    for k in ("path", "old_path"):
        if isinstance(d.get(k), str):
            out.append(d[k].lstrip("/"))
    return out
