"""Errors of the forkspace API, one class per error code.

Every error the server returns has the shape ``{"code", "message",
"path"}``; the client raises the class registered for its code (a
subclass of :class:`ForkspaceError`), so callers catch what they mean::

    try:
        ws.read_bytes("missing.txt")
    except forkspace.NotFound:
        ...
"""

from __future__ import annotations

from typing import Dict, Optional, Type


class ForkspaceError(Exception):
    """An error answered by the forkspace server (or met reaching it)."""

    code = "error"

    def __init__(self, message: str, *, code: Optional[str] = None, path: str = "", status: int = 0):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.path = path
        self.status = status

    def __str__(self) -> str:
        return self.message


_BY_CODE: Dict[str, Type[ForkspaceError]] = {}


def _register(*codes: str):
    def deco(cls: Type[ForkspaceError]) -> Type[ForkspaceError]:
        cls.code = codes[0]
        for c in codes:
            _BY_CODE[c] = cls
        return cls

    return deco


@_register("not_found", "no_route")
class NotFound(ForkspaceError):
    """The workspace, checkpoint, path or route does not exist (or is hidden from the token)."""


@_register("exists")
class AlreadyExists(ForkspaceError):
    """The name is taken."""


@_register("invalid", "bad_request", "name_too_long", "loop")
class InvalidArgument(ForkspaceError):
    """The request is malformed: a bad name, path, field or value."""


@_register("not_dir")
class NotADirectory(ForkspaceError):
    """A path component is not a directory."""


@_register("is_dir")
class IsADirectory(ForkspaceError):
    """The path is a directory where a file was expected."""


@_register("not_empty")
class DirectoryNotEmpty(ForkspaceError):
    """The directory is not empty (remove it with recursive=True)."""


@_register("conflict", "stale", "closed")
class Conflict(ForkspaceError):
    """The state changed under the call, or a merge met conflicts."""


@_register("quota")
class QuotaExceeded(ForkspaceError):
    """The workspace's quota (bytes or entries) would be exceeded; nothing was written."""


@_register("read_only")
class ReadOnly(ForkspaceError):
    """The target is read-only (a checkpoint, a read-only mount)."""


@_register("permission", "forbidden")
class PermissionDenied(ForkspaceError):
    """The token does not allow the call."""


@_register("unauthenticated")
class Unauthenticated(ForkspaceError):
    """No valid token: missing, malformed, expired or revoked (the message says which)."""


@_register("precondition_failed")
class PreconditionFailed(ForkspaceError):
    """If-Match / If-None-Match did not hold; nothing was written."""


@_register("range_not_satisfiable")
class RangeNotSatisfiable(ForkspaceError):
    """The requested byte range lies beyond the end of the file."""


@_register("too_large")
class TooLarge(ForkspaceError):
    """The request is larger than the server accepts."""


@_register("busy", "timeout", "canceled")
class Unavailable(ForkspaceError):
    """The server is busy or the call was stopped; retrying later may succeed."""


@_register("unsupported", "method_not_allowed")
class Unsupported(ForkspaceError):
    """The server does not support the call."""


@_register("corrupt", "internal")
class ServerError(ForkspaceError):
    """The server failed (stored data damaged, or an internal error)."""


class ConnectionFailed(ForkspaceError):
    """The server could not be reached, or the connection broke mid-call."""

    code = "connection"


def error_for(status: int, code: str, message: str, path: str = "") -> ForkspaceError:
    """Return the exception for an error body (the class of its code, or ForkspaceError)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        if status == 401:
            cls = Unauthenticated
        elif status == 403:
            cls = PermissionDenied
        elif status == 404:
            cls = NotFound
        else:
            cls = ForkspaceError
    return cls(message or f"HTTP {status}", code=code or cls.code, path=path, status=status)
