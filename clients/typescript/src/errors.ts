/**
 * Errors of the forkspace API, one class per error code.
 *
 * Every error the server returns has the shape `{"code", "message",
 * "path"}` (docs/rest.md, "Errors"); the client throws the class registered
 * for its code, a subclass of {@link ForkspaceError}, so callers test what
 * they mean with `instanceof`:
 *
 * ```ts
 * try { await ws.readText("missing.txt"); }
 * catch (e) { if (e instanceof NotFound) { ... } else throw e; }
 * ```
 */

/** An error answered by the forkspace server, or met reaching it. */
export class ForkspaceError extends Error {
  /** The API error code ("not_found", "quota", ...). */
  readonly code: string;
  /** The HTTP status (0 when the error came inside a stream or from the client). */
  readonly status: number;
  /** The workspace path the error is about, when the server named one. */
  readonly path: string;

  constructor(message: string, opts: { code?: string; status?: number; path?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = opts.code || (new.target as unknown as { defaultCode?: string }).defaultCode || "error";
    this.status = opts.status ?? 0;
    this.path = opts.path ?? "";
  }
}

type ErrorClass = new (message: string, opts?: { code?: string; status?: number; path?: string; cause?: unknown }) => ForkspaceError;

const byCode = new Map<string, ErrorClass>();

function register(cls: ErrorClass & { defaultCode?: string }, ...codes: string[]): void {
  cls.defaultCode = codes[0];
  for (const c of codes) byCode.set(c, cls);
}

/** The workspace, checkpoint, path or route does not exist (or the token does not reach it). */
export class NotFound extends ForkspaceError {}
/** The name is taken. */
export class AlreadyExists extends ForkspaceError {}
/** The request is malformed: a bad name, path, field or value. */
export class InvalidArgument extends ForkspaceError {}
/** A path component is not a directory. */
export class NotADirectory extends ForkspaceError {}
/** The path is a directory where a file was expected. */
export class IsADirectory extends ForkspaceError {}
/** The directory is not empty (remove it with `recursive`). */
export class DirectoryNotEmpty extends ForkspaceError {}
/** The state changed under the call, or a merge met conflicts (`result` holds them). */
export class Conflict extends ForkspaceError {
  /** For a merge stopped by the fail policy: the merge result with its conflicts. */
  result?: MergeResultLike;
}
/** The workspace's quota (bytes or entries) would be exceeded; nothing was written. */
export class QuotaExceeded extends ForkspaceError {}
/** The target is read-only (a checkpoint, a read-only mount). */
export class ReadOnly extends ForkspaceError {}
/** The token does not allow the call. */
export class PermissionDenied extends ForkspaceError {}
/** No valid token: missing, malformed, unknown, expired or revoked. */
export class Unauthenticated extends ForkspaceError {}
/** If-Match / If-None-Match did not hold; nothing was written. */
export class PreconditionFailed extends ForkspaceError {}
/** The requested byte range lies beyond the end of the file. */
export class RangeNotSatisfiable extends ForkspaceError {}
/** The request is larger than the server accepts. */
export class TooLarge extends ForkspaceError {}
/** The server is busy or the call was stopped; retrying later may succeed. */
export class Unavailable extends ForkspaceError {}
/** The server does not support the call. */
export class Unsupported extends ForkspaceError {}
/** The server failed (stored data damaged, or an internal error). */
export class ServerError extends ForkspaceError {}
/** A change-feed position the feed cannot continue from (pruned, or past the newest entry). */
export class TooOld extends ForkspaceError {}
/** The server could not be reached, or the connection broke mid-call. */
export class ConnectionFailed extends ForkspaceError {}

/** The part of a merge result a {@link Conflict} carries. */
export interface MergeResultLike {
  conflicts: unknown[];
  [key: string]: unknown;
}

register(NotFound, "not_found", "no_route");
register(AlreadyExists, "exists");
register(InvalidArgument, "invalid", "bad_request", "name_too_long", "loop");
register(NotADirectory, "not_dir");
register(IsADirectory, "is_dir");
register(DirectoryNotEmpty, "not_empty");
register(Conflict, "conflict", "stale", "closed");
register(QuotaExceeded, "quota");
register(ReadOnly, "read_only");
register(PermissionDenied, "permission", "forbidden");
register(Unauthenticated, "unauthenticated");
register(PreconditionFailed, "precondition_failed");
register(RangeNotSatisfiable, "range_not_satisfiable");
register(TooLarge, "too_large");
register(Unavailable, "busy", "timeout", "canceled");
register(Unsupported, "unsupported", "method_not_allowed");
register(ServerError, "corrupt", "internal");
register(TooOld, "too_old");
register(ConnectionFailed, "connection");

const byStatus: Record<number, ErrorClass> = {
  401: Unauthenticated,
  403: PermissionDenied,
  404: NotFound,
  410: TooOld,
  412: PreconditionFailed,
  416: RangeNotSatisfiable,
  503: Unavailable,
};

/** The error for an API error body: the class of its code (else of its status, else ForkspaceError). */
export function errorFor(status: number, code: string, message: string, path = ""): ForkspaceError {
  const cls = byCode.get(code) ?? byStatus[status] ?? ForkspaceError;
  return new cls(message || `HTTP ${status}`, { code: code || undefined, status, path });
}
