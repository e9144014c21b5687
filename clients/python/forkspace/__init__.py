"""forkspace: durable, forkable workspaces for AI agents — the Python client.

    import forkspace

    fs = forkspace.Client()                      # $FORKSPACE_SERVER, $FORKSPACE_TOKEN
    ws = fs.create_workspace("agent-1")
    ws.write_text("notes.md", "# plan\\n")
    ws.checkpoint("before")
    trial = ws.fork("agent-1-try")
    print(trial.exec("ls -l").stdout)
    ws.merge("agent-1-try")
"""

from .client import DEFAULT_SERVER, Client, Entry, Event, ExecResult, Workspace
from .errors import (AlreadyExists, Conflict, ConnectionFailed, DirectoryNotEmpty, ForkspaceError, InvalidArgument,
                     IsADirectory, NotADirectory, NotFound, PermissionDenied, PreconditionFailed, QuotaExceeded,
                     RangeNotSatisfiable, ReadOnly, ServerError, TooLarge, Unauthenticated, Unavailable, Unsupported)
from .memfs import DirEntry, FileStat, MemoryFS, VirtualFileSystem, mount, sync_back

__all__ = [
    "DEFAULT_SERVER", "Client", "Entry", "Event", "ExecResult", "Workspace",
    "AlreadyExists", "Conflict", "ConnectionFailed", "DirectoryNotEmpty", "ForkspaceError", "InvalidArgument",
    "IsADirectory", "NotADirectory", "NotFound", "PermissionDenied", "PreconditionFailed", "QuotaExceeded",
    "RangeNotSatisfiable", "ReadOnly", "ServerError", "TooLarge", "Unauthenticated", "Unavailable", "Unsupported",
    "DirEntry", "FileStat", "MemoryFS", "VirtualFileSystem", "mount", "sync_back",
]
