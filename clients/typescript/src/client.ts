/**
 * The forkspace HTTP API client: workspaces, files, checkpoints, forks,
 * diffs, merges, exec, archives, mounts, tokens, space and the change feed.
 *
 * Only the platform's `fetch` is used (Node.js 18.17 or later, Deno, Bun,
 * browsers). Uploads and downloads stream: a body may be a
 * `ReadableStream` or any `AsyncIterable<Uint8Array>` (a Node.js
 * `fs.createReadStream` is one), and downloads are `ReadableStream`s, so
 * files of any size pass through a bounded amount of memory.
 */

import { Conflict, ConnectionFailed, ForkspaceError, InvalidArgument, Unauthenticated, errorFor } from "./errors.js";
import { type FeedEvent, type EventsOptions, feedEvents } from "./events.js";
import { fromBase64, readLines, toBase64 } from "./streams.js";

/** The server a client reaches when none is named. */
export const DEFAULT_SERVER = "http://127.0.0.1:7777";

/** What a request or an upload may carry. */
export type Body = Uint8Array | ArrayBuffer | string | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Options of a {@link Client}. */
export interface ClientOptions {
  /** The server's base URL, http(s)://HOST[:PORT] (default: $FORKSPACE_SERVER where there is an environment, else http://127.0.0.1:7777). */
  url?: string;
  /** A token, sent as `Authorization: Bearer` (default: $FORKSPACE_TOKEN where there is an environment; "" sends none). */
  token?: string;
  /** Recorded as the actor of every mutation in the audit log (X-Forkspace-Actor; default "typescript"). */
  actor?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** Options of one request. */
export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined | null | Array<string>>;
  json?: unknown;
  body?: Body;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A workspace's description (GET /v1/workspaces/{ws}). */
export interface WorkspaceInfo {
  id: string;
  name: string;
  parent_id?: string;
  origin_checkpoint?: string;
  quota: { max_bytes?: number; max_entries?: number };
  created_at: string;
  updated_at: string;
  entries?: number;
  bytes?: number;
  checkpoints?: number;
  exclusive_bytes?: number;
  shared_bytes?: number;
  conflicts?: number;
  [key: string]: unknown;
}

/** One file tree entry (what stat and listings return). */
export interface Entry {
  name: string;
  path: string;
  type: "file" | "dir" | "symlink" | string;
  mode: string;
  size: number;
  mtime: string;
  atime?: string;
  ctime?: string;
  ino?: number;
  nlink?: number;
  uid?: number;
  gid?: number;
  target?: string;
  etag?: string;
}

/** A checkpoint of a workspace. */
export interface Checkpoint {
  id: string;
  label?: string;
  created_at?: string;
  [key: string]: unknown;
}

/** One step of the changes between two states (vfs.Change). */
export interface Change {
  op: "added" | "modified" | "deleted" | "renamed" | string;
  path: string;
  old_path?: string;
  type?: string;
  link?: string;
  replaced?: boolean;
  unified?: string;
}

/** How a merge, cherry-pick or path restore went. */
export interface MergeResult {
  changed: string[];
  conflicts: Array<{ path: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** How an exec ended: exit code, output, and what it changed (provider.ExecResult). */
export interface ExecResult {
  exit_code: number;
  stdout: string;
  stderr: string;
  timed_out?: boolean;
  changed?: Array<{ path: string; op: string; reason?: string }>;
  dropped?: Array<{ path: string; op: string; reason?: string }>;
  duration: number;
  killed?: string;
  pulled_back: boolean;
  pull_error?: string;
  [key: string]: unknown;
}

/** Options of {@link Workspace.exec}. */
export interface ExecOptions {
  env?: Record<string, string>;
  /** Bounds the run, in milliseconds (0: the server's default). */
  timeoutMs?: number;
  /** Allow network access (off by default). */
  network?: boolean;
  /** Caps stdout and stderr each, in bytes. */
  maxOutput?: number;
  /** Receives stdout as it comes. */
  onStdout?: (chunk: Uint8Array) => void;
  /** Receives stderr as it comes. */
  onStderr?: (chunk: Uint8Array) => void;
  signal?: AbortSignal;
}

/** Options of {@link Workspace.write}. */
export interface WriteOptions {
  /** Permission bits (default 0o644). */
  mode?: number;
  /** Write only if the file's ETag is this (PreconditionFailed otherwise, nothing written). */
  ifMatch?: string;
  /** Write only if the file does not exist (PreconditionFailed otherwise). */
  createOnly?: boolean;
  signal?: AbortSignal;
}

/** A byte range of a file: `length` bytes from `offset` (to the end when absent). */
export interface RangeOptions {
  offset?: number;
  length?: number;
  signal?: AbortSignal;
}

/** A quota: 0 or absent fields mean unlimited. */
export interface Quota {
  maxBytes?: number;
  maxEntries?: number;
}

/** A token as minted by {@link Client.createToken}; `token` is the secret, shown once. */
export interface TokenInfo {
  id: string;
  token?: string;
  tenant?: string;
  workspaces?: string;
  /** "read,write,exec", "all", ... */
  perms?: string;
  label?: string;
  state?: string;
  [key: string]: unknown;
}

/** What a new token may do (no wider than the caller's). */
export interface TokenRequest {
  tenant?: string;
  /** A workspace name pattern ("agent-1*"). */
  workspaces?: string;
  /** Permissions: "read", "write", "exec", "admin", "all", as a list or comma-separated. */
  perms?: string[] | string;
  /** Lifetime in milliseconds (0: no expiry, or the caller's). */
  expiresInMs?: number;
  label?: string;
}

function env(name: string): string | undefined {
  const g = globalThis as { process?: { env?: Record<string, string | undefined> } };
  return g.process?.env?.[name];
}

/** A connection to a forkspace server. A client holds no per-call state and may be shared. */
export class Client {
  /** The server's base URL (scheme, host and port). */
  readonly url: string;
  readonly token: string;
  readonly actor: string;
  private readonly fetchFn: typeof fetch;

  constructor(opts: ClientOptions = {}) {
    const raw = opts.url || env("FORKSPACE_SERVER") || DEFAULT_SERVER;
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new TypeError(`forkspace server URL must be http(s)://HOST[:PORT], not ${JSON.stringify(raw)}`);
    }
    if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) {
      throw new TypeError(`forkspace server URL must be http(s)://HOST[:PORT], not ${JSON.stringify(raw)}`);
    }
    this.url = u.origin;
    this.token = opts.token ?? env("FORKSPACE_TOKEN") ?? "";
    this.actor = opts.actor ?? "typescript";
    this.fetchFn = opts.fetch ?? globalThis.fetch.bind(globalThis);
  }

  // ---- transport ---------------------------------------------------------

  /**
   * Send one request and return the response, throwing the API's error
   * (a {@link ForkspaceError} subclass) for a status of 400 or more. The
   * caller reads (or cancels) the body.
   */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    let url = this.url + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) {
        if (v === undefined || v === null || v === "" || v === false) continue;
        for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
      }
      const s = q.toString();
      if (s) url += "?" + s;
    }
    const headers: Record<string, string> = { "X-Forkspace-Actor": this.actor, ...opts.headers };
    if (this.token) headers["Authorization"] = "Bearer " + this.token;
    let body: BodyInit | undefined;
    let streamed = false;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["Content-Type"] = "application/json";
    } else if (opts.body !== undefined) {
      [body, streamed] = toBodyInit(opts.body);
    }
    const init: RequestInit & { duplex?: "half" } = { method, headers, body, signal: opts.signal };
    if (streamed) init.duplex = "half"; // a streamed request body (fetch requires saying so)
    let resp: Response;
    try {
      resp = await this.fetchFn(url, init);
    } catch (e) {
      if (isAbort(e)) throw e;
      throw new ConnectionFailed(`${method} ${path}: cannot reach forkspace at ${this.url}: ${describe(e)}`, { cause: e });
    }
    if (resp.status >= 400) throw await this.errorOf(resp);
    return resp;
  }

  /** Send one request and decode its reply: JSON, text, or undefined for an empty one. */
  async call<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const resp = await this.request(method, path, opts);
    const text = await readText(resp, method, path);
    if (resp.status === 204 || text === "") return undefined as T;
    if ((resp.headers.get("Content-Type") ?? "").includes("json")) return JSON.parse(text) as T;
    return text as T;
  }

  private async errorOf(resp: Response): Promise<ForkspaceError> {
    const raw = await resp.text().catch(() => "");
    let code = "";
    let message = raw.trim();
    let path = "";
    try {
      const e = JSON.parse(raw) as { code?: string; message?: string; path?: string };
      code = e.code ?? "";
      message = e.message ?? "";
      path = e.path ?? "";
    } catch {
      // not a JSON error body: keep the text
    }
    const err = errorFor(resp.status, code, message, path);
    if (err instanceof Unauthenticated) {
      // Name the cause: the server answers one message for a malformed,
      // unknown, expired or revoked token on purpose.
      const why = this.token
        ? `the server refused this client's token (${message}): it is malformed, unknown, expired or revoked, or was minted from a revoked or expired token`
        : `the server needs a token and this client has none (${message}): pass ClientOptions.token or set FORKSPACE_TOKEN`;
      return new Unauthenticated(why, { code: err.code, status: err.status, path });
    }
    return err;
  }

  // ---- workspaces ----------------------------------------------------------

  /** Every workspace the token sees, by name (paged transparently). */
  async *workspaces(opts: { pageSize?: number; signal?: AbortSignal } = {}): AsyncGenerator<WorkspaceInfo> {
    let cursor = "";
    do {
      const page = await this.call<{ workspaces?: WorkspaceInfo[]; next?: string }>("GET", "/v1/workspaces", {
        query: { limit: opts.pageSize ?? 500, cursor },
        signal: opts.signal,
      });
      yield* page.workspaces ?? [];
      cursor = page.next ?? "";
    } while (cursor);
  }

  /** Create a workspace and return a handle on it. */
  async createWorkspace(name: string, opts: { quota?: Quota; mounts?: string[]; signal?: AbortSignal } = {}): Promise<Workspace> {
    const ws = new Workspace(this, name);
    await this.call("POST", "/v1/workspaces", {
      json: { name, ...quotaJSON(opts.quota), ...(opts.mounts?.length ? { mounts: opts.mounts } : {}) },
      signal: opts.signal,
    });
    return ws;
  }

  /** A handle on workspace `name` (or `NAME@CHECKPOINT`, read-only); nothing is sent until it is used. */
  workspace(name: string): Workspace {
    return new Workspace(this, name);
  }

  /** The changes from one state to another. */
  diff(from: string, to: string, opts?: { unified?: false; signal?: AbortSignal }): Promise<Change[]>;
  /** The changes from one state to another as unified text. */
  diff(from: string, to: string, opts: { unified: true; signal?: AbortSignal }): Promise<string>;
  async diff(from: string, to: string, opts: { unified?: boolean; signal?: AbortSignal } = {}): Promise<Change[] | string> {
    const r = await this.call<Change[] | string | undefined>("GET", "/v1/diff", {
      query: { from, to, format: opts.unified ? "unified" : undefined },
      signal: opts.signal,
    });
    return r ?? (opts.unified ? "" : []);
  }

  /** Diff 2 to 16 states pairwise: `changes[i][j]` counts the changes between states i and j. */
  compare(states: string[], opts: { unified?: boolean; signal?: AbortSignal } = {}): Promise<{
    states: string[];
    changes: number[][];
    pairs: Array<{ from: string; to: string; changes: Change[] }>;
  }> {
    return this.call("GET", "/v1/compare", { query: { state: states, unified: opts.unified }, signal: opts.signal });
  }

  /** The audit log, newest first (`limit` 0: all). */
  async audit(opts: { workspace?: string; session?: string; limit?: number; before?: number; signal?: AbortSignal } = {}): Promise<Array<Record<string, unknown>>> {
    const r = await this.call<Array<Record<string, unknown>> | undefined>("GET", "/v1/audit", {
      query: { workspace: opts.workspace, session: opts.session, limit: opts.limit ?? 100, before: opts.before || undefined },
      signal: opts.signal,
    });
    return r ?? [];
  }

  /** The change feed of every workspace the token reaches (see {@link Workspace.events}). */
  events(opts: EventsOptions = {}): AsyncGenerator<FeedEvent> {
    return feedEvents(this, "/v1/events", opts);
  }

  /** Garbage collection (a dry run unless `dryRun` is false). */
  gc(opts: { dryRun?: boolean; graceMs?: number; signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    return this.call("POST", "/v1/gc", {
      json: { dry_run: opts.dryRun ?? true, grace_ns: Math.round((opts.graceMs ?? 0) * 1e6) },
      signal: opts.signal,
    });
  }

  /** Check the store's integrity. */
  fsck(opts: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    return this.call("POST", "/v1/fsck", { signal: opts.signal });
  }

  /** Space: stored, reachable and garbage bytes, and per workspace. */
  df(opts: { signal?: AbortSignal } = {}): Promise<{ workspaces: Array<Record<string, unknown>>; [key: string]: unknown }> {
    return this.call("GET", "/v1/df", { signal: opts.signal });
  }

  /** The OpenAPI document of the server. */
  openapi(opts: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    return this.call("GET", "/v1/openapi.json", { signal: opts.signal });
  }

  // ---- tokens --------------------------------------------------------------

  /** Mint a token no wider than the caller's; its `token` secret is shown once. */
  createToken(req: TokenRequest = {}, opts: { signal?: AbortSignal } = {}): Promise<TokenInfo> {
    return this.call("POST", "/v1/tokens", {
      json: omitEmpty({
        tenant: req.tenant,
        workspaces: req.workspaces,
        perms: Array.isArray(req.perms) ? req.perms.join(",") : req.perms,
        expires_in_ns: req.expiresInMs ? Math.round(req.expiresInMs * 1e6) : undefined,
        label: req.label,
      }),
      signal: opts.signal,
    });
  }

  /** The tokens the caller manages. */
  async tokens(opts: { signal?: AbortSignal } = {}): Promise<TokenInfo[]> {
    const r = await this.call<TokenInfo[] | { tokens?: TokenInfo[] } | undefined>("GET", "/v1/tokens", { signal: opts.signal });
    return Array.isArray(r) ? r : (r?.tokens ?? []);
  }

  /** Revoke a token and every token minted from it. */
  async revokeToken(id: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    await this.call("DELETE", "/v1/tokens/" + encodeURIComponent(id), { signal: opts.signal });
  }
}

/** One workspace (or, named `NAME@CHECKPOINT`, a read-only state of one). */
export class Workspace {
  readonly client: Client;
  readonly name: string;
  private readonly base: string;

  /** A handle; an empty name, "." or ".." is InvalidArgument (fetch would resolve the latter two into another route). */
  constructor(client: Client, name: string) {
    if (name === "" || name === "." || name === "..") {
      throw new InvalidArgument(`workspace name ${JSON.stringify(name)}: not a workspace name`, { code: "invalid" });
    }
    this.client = client;
    this.name = name;
    this.base = "/v1/workspaces/" + encodeURIComponent(name).replace(/%40/g, "@");
  }

  private route(kind: string, path: string): string {
    return `${this.base}/${kind}/${quotePath(path)}`;
  }

  private call<T = unknown>(method: string, suffix: string, opts: RequestOptions = {}): Promise<T> {
    return this.client.call<T>(method, this.base + suffix, opts);
  }

  // ---- identity, lifecycle ---------------------------------------------------

  info(opts: { signal?: AbortSignal } = {}): Promise<WorkspaceInfo> {
    return this.call("GET", "", opts);
  }

  async delete(opts: { signal?: AbortSignal } = {}): Promise<void> {
    await this.call("DELETE", "", opts);
  }

  /** Fork the live state (or this checkpoint, for `NAME@CP`) into a new workspace. */
  async fork(name: string, opts: { quota?: Quota; signal?: AbortSignal } = {}): Promise<Workspace> {
    const fork = new Workspace(this.client, name);
    await this.call("POST", "/fork", { json: { name, ...quotaJSON(opts.quota) }, signal: opts.signal });
    return fork;
  }

  /** Fork the live state N ways in one transaction (names `PREFIX-K`, or `names`). */
  async forkN(n: number, opts: { names?: string[]; prefix?: string; quota?: Quota; signal?: AbortSignal } = {}): Promise<WorkspaceInfo[]> {
    return this.call("POST", "/fork-n", {
      json: omitEmpty({ n, names: opts.names, prefix: opts.prefix, ...quotaJSON(opts.quota) }),
      signal: opts.signal,
    });
  }

  /** Merge this fork into its parent (or make it the parent's head), then delete its sibling forks unless `keep`. */
  promote(opts: { head?: boolean; policy?: string; keep?: boolean; signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    return this.call("POST", "/promote", { json: omitEmpty({ head: opts.head, policy: opts.policy, keep: opts.keep }), signal: opts.signal });
  }

  /** The state this workspace was forked from. */
  async parent(opts: { signal?: AbortSignal } = {}): Promise<string> {
    return (await this.call<{ state: string }>("GET", "/parent", opts)).state;
  }

  // ---- checkpoints, diffs, merges ----------------------------------------------

  async checkpoints(opts: { signal?: AbortSignal } = {}): Promise<Checkpoint[]> {
    return (await this.call<Checkpoint[] | undefined>("GET", "/checkpoints", opts)) ?? [];
  }

  checkpoint(label = "", opts: { signal?: AbortSignal } = {}): Promise<Checkpoint> {
    return this.call("POST", "/checkpoints", { json: { label }, signal: opts.signal });
  }

  async restore(checkpoint: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    await this.call("POST", "/restore", { json: { checkpoint }, signal: opts.signal });
  }

  /** The read-only state `NAME@checkpoint`. */
  at(checkpoint: string): Workspace {
    return new Workspace(this.client, this.name.split("@")[0] + "@" + checkpoint);
  }

  /** The changes from state `other` to this one. */
  diff(other: string, opts?: { unified?: false; signal?: AbortSignal }): Promise<Change[]>;
  diff(other: string, opts: { unified: true; signal?: AbortSignal }): Promise<string>;
  diff(other: string, opts: { unified?: boolean; signal?: AbortSignal } = {}): Promise<Change[] | string> {
    return opts.unified
      ? this.client.diff(other, this.name, { unified: true, signal: opts.signal })
      : this.client.diff(other, this.name, { signal: opts.signal });
  }

  private async mergeCall(route: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<MergeResult> {
    const reply = await this.call<{ result?: MergeResult; stopped?: string }>("POST", route, { json: omitEmpty(body), signal });
    const result = (reply.result ?? {}) as MergeResult;
    result.changed ??= [];
    result.conflicts ??= [];
    if (reply.stopped) {
      const err = new Conflict(`${route.slice(1)} stopped: ${reply.stopped}; nothing changed`, { code: "conflict", status: 200 });
      err.result = result;
      throw err;
    }
    return result;
  }

  /**
   * Three-way merge of state `from` into this workspace. `policy`:
   * "" (conflicts recorded as data, the default), "fail" (throw Conflict and
   * change nothing when any), "ours", "theirs".
   */
  merge(from: string, opts: { policy?: string; base?: string; signal?: AbortSignal } = {}): Promise<MergeResult> {
    return this.mergeCall("/merge", { from, base: opts.base, policy: opts.policy }, opts.signal);
  }

  /** Bring `paths` (or, with `changes`, the changes under them) from any state into this workspace. */
  cherryPick(from: string, paths: string[], opts: { changes?: boolean; policy?: string; signal?: AbortSignal } = {}): Promise<MergeResult> {
    return this.mergeCall("/cherry-pick", { from, paths, changes: opts.changes, policy: opts.policy }, opts.signal);
  }

  /** Restore only `paths` from a checkpoint. */
  restorePaths(checkpoint: string, paths: string[], opts: { signal?: AbortSignal } = {}): Promise<MergeResult> {
    return this.mergeCall("/restore-paths", { checkpoint, paths }, opts.signal);
  }

  /** The unresolved merge conflicts. */
  async conflicts(opts: { signal?: AbortSignal } = {}): Promise<Array<{ path: string; [key: string]: unknown }>> {
    return (await this.call<Array<{ path: string }> | undefined>("GET", "/conflicts", opts)) ?? [];
  }

  /** Settle one conflict (`take`: ours, theirs, markers, content); returns how many are left. */
  async resolve(path: string, take: "ours" | "theirs" | "markers" | "content", opts: { content?: Uint8Array | string; signal?: AbortSignal } = {}): Promise<number> {
    const body: Record<string, unknown> = { path, take };
    if (opts.content !== undefined) body.content = toBase64(typeof opts.content === "string" ? new TextEncoder().encode(opts.content) : opts.content);
    return (await this.call<{ conflicts_left: number }>("POST", "/resolve", { json: body, signal: opts.signal })).conflicts_left;
  }

  // ---- files -------------------------------------------------------------

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    return this.client.call("GET", this.route("stat", path), opts);
  }

  /** Whether `path` exists (false for NotFound; other errors are thrown). */
  async exists(path: string, opts: { signal?: AbortSignal } = {}): Promise<boolean> {
    try {
      await this.stat(path, opts);
      return true;
    } catch (e) {
      if (e instanceof ForkspaceError && e.code === "not_found") return false;
      throw e;
    }
  }

  /** The entries of a directory, by name (paged transparently). */
  async *listdir(path = "", opts: { pageSize?: number; signal?: AbortSignal } = {}): AsyncGenerator<Entry> {
    let cursor = "";
    do {
      const page = await this.client.call<{ entries?: Entry[]; next?: string }>("GET", this.route("dir", path), {
        query: { limit: opts.pageSize ?? 1000, cursor },
        signal: opts.signal,
      });
      yield* page.entries ?? [];
      cursor = page.next ?? "";
    } while (cursor);
  }

  /** The entries of a directory as an array. */
  async readdir(path = "", opts: { signal?: AbortSignal } = {}): Promise<Entry[]> {
    const out: Entry[] = [];
    for await (const e of this.listdir(path, opts)) out.push(e);
    return out;
  }

  /**
   * A file (or a byte range of it) as a stream. A file replaced while it is
   * sent ends the stream with an error rather than mixing two versions.
   */
  async open(path: string, opts: RangeOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const resp = await this.client.request("GET", this.route("files", path), { headers: rangeHeader(opts), signal: opts.signal });
    return resp.body ?? new ReadableStream({ start: (c) => c.close() });
  }

  /** A whole file (or a byte range of it) in memory; use {@link open} or {@link download} for large files. */
  async readBytes(path: string, opts: RangeOptions = {}): Promise<Uint8Array> {
    const resp = await this.client.request("GET", this.route("files", path), { headers: rangeHeader(opts), signal: opts.signal });
    try {
      return new Uint8Array(await resp.arrayBuffer());
    } catch (e) {
      if (isAbort(e)) throw e;
      throw new ConnectionFailed(`read ${path}: the download broke off: ${describe(e)}`, { cause: e });
    }
  }

  async readText(path: string, opts: RangeOptions = {}): Promise<string> {
    return new TextDecoder().decode(await this.readBytes(path, opts));
  }

  /** Stream a file into `dest`; returns the bytes written. */
  async download(path: string, dest: WritableStream<Uint8Array>, opts: RangeOptions = {}): Promise<number> {
    const src = await this.open(path, opts);
    let n = 0;
    const count = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        n += chunk.byteLength;
        c.enqueue(chunk);
      },
    });
    await src.pipeThrough(count).pipeTo(dest, { signal: opts.signal });
    return n;
  }

  /**
   * Replace a file whole with `data` (bytes, text, a Blob, or a stream read
   * in chunks: any size), atomically: on any error nothing changes.
   */
  async write(path: string, data: Body, opts: WriteOptions = {}): Promise<Entry> {
    const headers: Record<string, string> = { "Content-Type": "application/octet-stream" };
    if (opts.ifMatch) headers["If-Match"] = opts.ifMatch;
    if (opts.createOnly) headers["If-None-Match"] = "*";
    return this.client.call("PUT", this.route("files", path), {
      query: { mode: (opts.mode ?? 0o644).toString(8).padStart(4, "0") },
      body: data,
      headers,
      signal: opts.signal,
    });
  }

  /** Remove a file, symlink or (with `recursive`, or when empty) directory. */
  async remove(path: string, opts: { recursive?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    await this.client.call("DELETE", this.route("files", path), { query: { recursive: opts.recursive ? "true" : undefined }, signal: opts.signal });
  }

  async rename(from: string, to: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    await this.call("POST", "/rename", { json: { from, to }, signal: opts.signal });
  }

  async mkdir(path: string, opts: { parents?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    await this.call("POST", "/mkdir", { json: { path, parents: opts.parents ?? false }, signal: opts.signal });
  }

  /** The glob tool: paths matching `pattern` as text, one a line. */
  async glob(pattern: string, opts: { path?: string; limit?: number; signal?: AbortSignal } = {}): Promise<string> {
    return (await this.call<{ text: string }>("POST", "/glob", { json: omitEmpty({ pattern, path: opts.path, limit: opts.limit }), signal: opts.signal })).text;
  }

  /** The grep tool: matching lines as text (`path:line:text`). */
  async grep(
    pattern: string,
    opts: { path?: string; glob?: string; literal?: boolean; ignoreCase?: boolean; context?: number; maxResults?: number; signal?: AbortSignal } = {},
  ): Promise<string> {
    const body = omitEmpty({
      pattern,
      path: opts.path,
      glob: opts.glob,
      literal: opts.literal,
      ignore_case: opts.ignoreCase,
      context: opts.context,
      max_results: opts.maxResults,
    });
    return (await this.call<{ text: string }>("POST", "/grep", { json: body, signal: opts.signal })).text;
  }

  // ---- archives -------------------------------------------------------------

  /** Unpack a tar archive (plain or gzip) into directory `to`, atomically. */
  importTar(tar: Body, opts: { to?: string; signal?: AbortSignal } = {}): Promise<{ entries: number; bytes: number; path: string }> {
    return this.call("POST", "/import", { query: { to: opts.to }, body: tar, headers: { "Content-Type": "application/x-tar" }, signal: opts.signal });
  }

  /** A tar archive of a directory (or file) as a stream. */
  async exportTar(opts: { from?: string; signal?: AbortSignal } = {}): Promise<ReadableStream<Uint8Array>> {
    const resp = await this.client.request("GET", this.base + "/export", { query: { from: opts.from }, signal: opts.signal });
    return resp.body ?? new ReadableStream({ start: (c) => c.close() });
  }

  // ---- exec, mounts, the change feed ------------------------------------------------

  /**
   * Run a shell command in the workspace's sandbox. Output streams to the
   * callbacks as it comes (NDJSON events); the result says how it ended and
   * what it changed.
   */
  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const req: Record<string, unknown> = { command };
    if (opts.env) req.env = opts.env;
    if (opts.timeoutMs) req.timeout = Math.round(opts.timeoutMs * 1e6);
    if (opts.network) req.network = true;
    if (opts.maxOutput) req.max_output = opts.maxOutput;
    const resp = await this.client.request("POST", this.base + "/exec", { json: req, signal: opts.signal });
    if (!resp.body) throw new ForkspaceError("exec: the server sent no stream");
    for await (const line of readLines(resp.body)) {
      if (!line.trim()) continue;
      const ev = JSON.parse(line) as { stdout?: string; stderr?: string; result?: ExecResult; error?: unknown };
      if (ev.stdout !== undefined) opts.onStdout?.(fromBase64(ev.stdout));
      else if (ev.stderr !== undefined) opts.onStderr?.(fromBase64(ev.stderr));
      else if (ev.result !== undefined) return ev.result;
      else if (ev.error !== undefined) {
        const e = ev.error;
        if (e && typeof e === "object") {
          const o = e as { code?: string; message?: string; path?: string };
          throw errorFor(0, o.code ?? "", o.message ?? "", o.path ?? "");
        }
        throw new ForkspaceError(String(e));
      }
    }
    throw new ConnectionFailed("exec: the server ended the stream without a result");
  }

  async mounts(opts: { signal?: AbortSignal } = {}): Promise<Array<Record<string, unknown>>> {
    return (await this.call<Array<Record<string, unknown>> | undefined>("GET", "/mounts", opts)) ?? [];
  }

  /** flush, refresh or prefetch one mount root (every mount if none). */
  async mountAction(action: "flush" | "refresh" | "prefetch", root = "", opts: { signal?: AbortSignal } = {}): Promise<void> {
    await this.call("POST", "/mounts/" + action, { json: { root }, signal: opts.signal });
  }

  /** Settle a write-back conflict of a mount at `path`. */
  async resolveMount(path: string, opts: { keepLocal?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    await this.call("POST", "/mounts/resolve", { json: { path, keep_local: opts.keepLocal ?? false }, signal: opts.signal });
  }

  /**
   * The workspace's change feed (Server-Sent Events): every change after
   * event `since` (or from now), as it happens. A dropped connection is
   * reconnected from the last event delivered (Last-Event-ID), so no event
   * is lost or repeated. Stop it with `signal` or by leaving the loop.
   */
  events(opts: EventsOptions = {}): AsyncGenerator<FeedEvent> {
    return feedEvents(this.client, this.base + "/events", opts);
  }

  /**
   * Wait up to `timeoutMs` for changes under `path`; return the first event
   * that names such a change (undefined on timeout).
   */
  async watch(path = "", opts: { timeoutMs?: number; since?: string } = {}): Promise<FeedEvent | undefined> {
    const prefix = path.replace(/^\/+|\/+$/g, "");
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), opts.timeoutMs ?? 30_000);
    try {
      for await (const ev of this.events({ since: opts.since, signal: ac.signal })) {
        if (ev.type !== "change") continue;
        const changed = (ev.data.changed as string[] | undefined) ?? [];
        if (!prefix || changed.some((p) => touches(p, prefix))) return ev;
      }
    } catch (e) {
      if (!isAbort(e)) throw e;
    } finally {
      clearTimeout(timer);
    }
    return undefined;
  }
}

/** Whether a changed path `p` (maybe a directory, or ".") may touch `prefix`. */
function touches(p: string, prefix: string): boolean {
  const c = p.replace(/^\/+/, "");
  return c === "." || c === "" || c === prefix || prefix.startsWith(c + "/") || c.startsWith(prefix + "/");
}

/**
 * The URL form of a workspace path. "." and ".." segments are refused
 * here: fetch would resolve them in the URL (even percent-encoded) and
 * send the request to another route.
 */
function quotePath(p: string): string {
  const segs = p.split("/").filter((s) => s !== "");
  if (segs.some((s) => s === "." || s === "..")) {
    throw new InvalidArgument(`path ${JSON.stringify(p)}: "." and ".." segments are not workspace paths`, { code: "invalid", path: p });
  }
  return segs.map(encodeURIComponent).join("/");
}

function rangeHeader(opts: RangeOptions): Record<string, string> {
  const offset = opts.offset ?? 0;
  if (!offset && opts.length === undefined) return {};
  const end = opts.length === undefined ? "" : String(offset + opts.length - 1);
  return { Range: `bytes=${offset}-${end}` };
}

function quotaJSON(q?: Quota): { quota?: { max_bytes?: number; max_entries?: number } } {
  if (!q || (!q.maxBytes && !q.maxEntries)) return {};
  return { quota: omitEmpty({ max_bytes: q.maxBytes, max_entries: q.maxEntries }) };
}

function omitEmpty<T extends Record<string, unknown>>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === null || v === "" || v === false) continue;
    (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

function toBodyInit(b: Body): [BodyInit, boolean] {
  if (typeof b === "string" || b instanceof ArrayBuffer || (typeof Blob !== "undefined" && b instanceof Blob)) return [b as BodyInit, false];
  if (b instanceof Uint8Array) return [b as unknown as BodyInit, false];
  if (b instanceof ReadableStream) return [b, true];
  if (Symbol.asyncIterator in b) {
    const it = b[Symbol.asyncIterator]();
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        const { value, done } = await it.next();
        if (done) c.close();
        else c.enqueue(value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBufferLike));
      },
      async cancel(reason) {
        await it.return?.(reason);
      },
    });
    return [stream, true];
  }
  throw new TypeError("body must be bytes, a string, a Blob, a ReadableStream or an AsyncIterable of bytes");
}

async function readText(resp: Response, method: string, path: string): Promise<string> {
  try {
    return await resp.text();
  } catch (e) {
    if (isAbort(e)) throw e;
    throw new ConnectionFailed(`${method} ${path}: the reply broke off: ${describe(e)}`, { cause: e });
  }
}

/** Whether e is the rejection of an aborted signal. */
export function isAbort(e: unknown): boolean {
  return e instanceof Error && (e.name === "AbortError" || e.name === "TimeoutError");
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message;
  }
  return String(e);
}
