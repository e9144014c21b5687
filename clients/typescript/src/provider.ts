/**
 * ForkspaceWorkspaceProvider: the seed 002 provider contract over a
 * forkspace server. One provider instance serves every session: it holds
 * only the shared {@link Client} (the server's URL and token) and a
 * logger; everything a session uses lives in the Workspace it returns.
 *
 * The ref payload is `{"workspace_id": ID}` — the same payload as the Go
 * local provider's (provider/localprovider), so a ref names the workspace
 * by ID (it survives renames) and holds no secret. {@link decodeRef} reads
 * refs in the seed's spelling and in the Go provider package's JSON
 * spelling; {@link toGoJSON} writes the latter.
 */

import { Client, Workspace as RemoteWorkspace } from "./client.js";
import {
  type FileEntry,
  type FileStat,
  type FileSystem,
  type GrepOptions,
  type GrepResult,
  type Logger,
  type OpenedWorkspace,
  type SessionRef,
  type Shell,
  type Snapshot,
  type Workspace,
  type WorkspaceCapabilityFlags,
  type WorkspaceProvider,
  type WorkspaceRef,
  WorkspaceEvictedError,
  WorkspaceFailedError,
  assertCapabilities,
  assertRefSchemaVersionSupported,
} from "./contract.js";
import { AlreadyExists, ConnectionFailed, NotFound, Unavailable } from "./errors.js";

/** The schema version of the refs this provider writes (N of the N±1 rule). */
export const REF_SCHEMA_VERSION = 2;

/** The config of a forkspace workspace, discriminated by `kind` (the provider's ID). */
export interface ForkspaceProviderConfig {
  readonly kind: string;
  /** The workspace's name or ID; absent: one workspace per session ({@link sessionWorkspace}). */
  readonly workspace?: string;
  /** When the workspace does not exist yet, create it as a fork of this state (NAME or NAME@CHECKPOINT). */
  readonly forkFrom?: string;
  /** Delete the workspace when the session closes it (the ref then resolves no more). */
  readonly ephemeral?: boolean;
}

/** Options of a {@link ForkspaceWorkspaceProvider}: process-wide, shared by every session. */
export interface ForkspaceProviderOptions {
  /** The client to use (default: one built from url and token). */
  client?: Client;
  url?: string;
  token?: string;
  /** The provider's ID and config kind (default "forkspace"; "local" resolves the Go local provider's refs of the same store). */
  providerId?: string;
  /** Offer the shell module (default true: the server runs commands). */
  shell?: boolean;
  logger?: Logger;
}

/** The ref payload. */
interface Payload {
  workspace_id: string;
  ephemeral?: boolean;
}

/**
 * The per-session workspace name of a session ID, as the Go local
 * provider's SessionWorkspace: "session-ID" when that is a valid name,
 * else "session_" and the first 16 bytes of the ID's SHA-256 in hex (no
 * direct name starts with "session_", so the two never collide). An empty
 * ID is refused.
 */
export async function sessionWorkspace(id: string): Promise<string> {
  if (!id) throw new WorkspaceFailedError("session workspace: empty session ID");
  const direct = "session-" + id;
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(direct)) return direct;
  // Node.js 18 has Web Crypto only as node:crypto's webcrypto (global from 19 on).
  const nodeCrypto = "node:crypto";
  const subtle: SubtleCrypto = globalThis.crypto?.subtle ?? ((await import(nodeCrypto)) as { webcrypto: Crypto }).webcrypto.subtle;
  const sum = new Uint8Array(await subtle.digest("SHA-256", new TextEncoder().encode(id)));
  return "session_" + Array.from(sum.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A failure of open or resolve: transient when a retry may fix it (unreachable or busy server). */
function failed(name: string, what: string, e: unknown): WorkspaceFailedError {
  if (e instanceof WorkspaceFailedError) return e;
  const transient = e instanceof ConnectionFailed || e instanceof Unavailable;
  const msg = e instanceof Error ? e.message : String(e);
  return new WorkspaceFailedError(`${what} workspace ${name}: ${msg}`, { workspaceName: name, transient, cause: e });
}

/** The provider of forkspace workspaces. */
export class ForkspaceWorkspaceProvider implements WorkspaceProvider<ForkspaceProviderConfig> {
  readonly providerId: string;
  private readonly client: Client;
  private readonly shellOffered: boolean;
  private readonly logger: Logger | undefined;

  constructor(opts: ForkspaceProviderOptions = {}) {
    this.providerId = opts.providerId ?? "forkspace";
    this.client = opts.client ?? new Client({ url: opts.url, token: opts.token });
    this.shellOffered = opts.shell ?? true;
    this.logger = opts.logger;
  }

  /** What this provider can build. */
  get capabilities(): WorkspaceCapabilityFlags {
    return { fs: true, shell: this.shellOffered, snapshot: true };
  }

  /**
   * Open (creating if needed) the configured workspace, or the session's
   * own. Strategy B of the seed: with `declaredCapabilities` only the
   * declared modules are built (undefined: all), and the ref says exactly
   * which. A declared capability this provider cannot build is a permanent
   * WorkspaceFailedError at open, not at tool-call time.
   */
  async open(config: ForkspaceProviderConfig, session: SessionRef, declaredCapabilities?: WorkspaceCapabilityFlags): Promise<OpenedWorkspace> {
    if (!config || config.kind !== this.providerId) {
      throw new WorkspaceFailedError(`provider ${JSON.stringify(this.providerId)}: config of kind ${JSON.stringify(config?.kind)} is not mine`, {
        workspaceName: config?.workspace ?? "",
      });
    }
    const name = config.workspace || (await sessionWorkspace(session?.sessionId));
    const offered = this.capabilities;
    const want = (cap: keyof WorkspaceCapabilityFlags) => Boolean(offered[cap]) && (declaredCapabilities ? Boolean(declaredCapabilities[cap]) : true);
    const caps: WorkspaceCapabilityFlags = { fs: want("fs"), shell: want("shell"), snapshot: want("snapshot") };
    const id = await this.openOrCreate(name, config.forkFrom);
    const ref: WorkspaceRef = {
      providerId: this.providerId,
      ref: config.ephemeral ? { workspace_id: id, ephemeral: true } : { workspace_id: id },
      capabilities: caps,
      schemaVersion: REF_SCHEMA_VERSION,
    };
    const ws = this.build(id, caps, config.ephemeral ?? false);
    assertCapabilities(name, declaredCapabilities, ref, ws);
    return { ws, ref };
  }

  private async openOrCreate(name: string, forkFrom?: string): Promise<string> {
    for (;;) {
      try {
        return (await this.client.workspace(name).info()).id;
      } catch (e) {
        if (!(e instanceof NotFound)) throw failed(name, "open", e);
      }
      try {
        const w = forkFrom ? await this.client.workspace(forkFrom).fork(name) : await this.client.createWorkspace(name);
        return (await w.info()).id;
      } catch (e) {
        if (!(e instanceof AlreadyExists)) throw failed(name, "create", e); // else created concurrently: open it
      }
    }
  }

  /**
   * Rebuild the live workspace from a ref after a runtime boundary, with the
   * modules the ref records. The ref's provider must be this one and its
   * schemaVersion pass the N±1 rule; a workspace that is gone is a permanent
   * failure, an unreachable server a transient one.
   */
  async resolve(ref: WorkspaceRef): Promise<Workspace> {
    if (!ref || typeof ref !== "object" || ref.providerId !== this.providerId) {
      throw new WorkspaceFailedError(`provider ${JSON.stringify(this.providerId)}: refusing to resolve a ref of provider ${JSON.stringify(ref?.providerId)}`, {
        workspaceName: this.providerId,
      });
    }
    assertRefSchemaVersionSupported(ref.schemaVersion, this.providerId, REF_SCHEMA_VERSION, this.logger);
    const p = ref.ref as Partial<Payload> | null | undefined;
    if (!p || typeof p !== "object" || typeof p.workspace_id !== "string" || p.workspace_id === "") {
      throw new WorkspaceFailedError(`provider ${JSON.stringify(this.providerId)}: ref payload has no workspace_id`, { workspaceName: this.providerId });
    }
    const caps = ref.capabilities ?? {};
    if (caps.code || (caps.shell && !this.shellOffered)) {
      throw new WorkspaceFailedError(`provider ${JSON.stringify(this.providerId)}: ref advertises modules this provider does not build`, {
        workspaceName: p.workspace_id,
      });
    }
    try {
      await this.client.workspace(p.workspace_id).info();
    } catch (e) {
      throw failed(p.workspace_id, "resolve", e);
    }
    return this.build(p.workspace_id, { fs: Boolean(caps.fs), shell: Boolean(caps.shell), snapshot: Boolean(caps.snapshot) }, p.ephemeral === true);
  }

  /** The live workspace: all its state is captured here, none on the provider. */
  private build(id: string, caps: WorkspaceCapabilityFlags, ephemeral: boolean): Workspace {
    const remote = this.client.workspace(id);
    const providerId = this.providerId;
    let closed = false;
    // Every module call goes through guard: closed workspaces refuse, and a
    // workspace gone from the server is WorkspaceEvictedError.
    const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
      if (closed) throw new Error(`workspace ${id} is closed`);
      try {
        return await fn();
      } catch (e) {
        if (e instanceof NotFound && (await gone(remote))) {
          throw new WorkspaceEvictedError(`workspace ${id} is gone from the server`, { workspaceName: id, cause: e });
        }
        throw e;
      }
    };
    const ws: { -readonly [K in keyof Workspace]: Workspace[K] } = {
      id,
      close: async () => {
        if (closed) return;
        closed = true;
        if (ephemeral) await remote.delete().catch((e) => (e instanceof NotFound ? undefined : Promise.reject(e)));
      },
    };
    if (caps.fs) ws.fs = fileSystem(remote, guard);
    if (caps.shell) ws.shell = shell(remote, guard);
    if (caps.snapshot) ws.snapshot = snapshot(remote, guard, providerId, caps);
    return ws;
  }
}

type Guard = <T>(fn: () => Promise<T>) => Promise<T>;

/** Whether the workspace itself is gone (not just a path in it). */
async function gone(remote: RemoteWorkspace): Promise<boolean> {
  try {
    await remote.info();
    return false;
  } catch (e) {
    return e instanceof NotFound;
  }
}

/** A workspace path from a seed-style path ("/a/b" or "a/b"; "/" is the root). */
function rel(p: string): string {
  return p.replace(/^\/+/, "").replace(/\/+$/, "");
}

function fileType(t: string): "file" | "dir" | "symlink" {
  return t === "dir" ? "dir" : t === "symlink" ? "symlink" : "file";
}

function fileSystem(remote: RemoteWorkspace, guard: Guard): FileSystem {
  return {
    readFile: (p) => guard(() => remote.readBytes(rel(p))),
    writeFile: (p, data) =>
      guard(async () => {
        const dir = rel(p).split("/").slice(0, -1).join("/");
        if (dir) await remote.mkdir(dir, { parents: true });
        await remote.write(rel(p), data);
      }),
    stat: (p) =>
      guard(async () => {
        const e = await remote.stat(rel(p));
        const st: FileStat = { path: p, type: fileType(e.type), size: e.size, mtime: e.mtime };
        return st;
      }),
    ls: (p) =>
      guard(async () => {
        const base = rel(p);
        const out: FileEntry[] = [];
        for await (const e of remote.listdir(base)) {
          out.push({ name: e.name, path: "/" + (base ? base + "/" : "") + e.name, type: fileType(e.type), size: e.size });
        }
        return out;
      }),
    glob: (pattern) =>
      guard(async () => {
        const text = await remote.glob(rel(pattern) || "**");
        return text
          .split("\n")
          .filter((l) => l !== "" && !l.startsWith("no paths match ") && !l.startsWith("… "))
          .map((l) => "/" + l.replace(/\/$/, ""));
      }),
    grep: (pattern, opts: GrepOptions = {}) =>
      guard(async () => {
        const text = await remote.grep(pattern, { path: opts.path ? rel(opts.path) : undefined, ignoreCase: opts.ignoreCase, maxResults: opts.maxResults });
        return parseGrep(text);
      }),
    rm: (p, opts) => guard(() => remote.remove(rel(p), { recursive: opts?.recursive ?? true })),
    mkdir: (p, opts) => guard(() => remote.mkdir(rel(p), { parents: opts?.recursive ?? true })),
  };
}

/** The matching lines of the grep tool's text ("path:N:line"; notes are skipped). */
export function parseGrep(text: string): GrepResult[] {
  const out: GrepResult[] = [];
  for (const l of text.split("\n")) {
    const m = /^(.*?):(\d+):(.*)$/.exec(l);
    if (m) out.push({ path: "/" + m[1], lineNumber: Number(m[2]), line: m[3] });
  }
  return out;
}

function shell(remote: RemoteWorkspace, guard: Guard): Shell {
  return {
    exec: (command, opts = {}) =>
      guard(async () => {
        const r = await remote.exec(command, { env: opts.env, timeoutMs: opts.timeoutMs });
        return { exitCode: r.exit_code, stdout: r.stdout, stderr: r.stderr, timedOut: r.timed_out ?? false };
      }),
  };
}

function snapshot(remote: RemoteWorkspace, guard: Guard, providerId: string, caps: WorkspaceCapabilityFlags): Snapshot {
  return {
    checkpoint: (label) =>
      guard(async () => {
        const c = await remote.checkpoint(label ?? "");
        return { id: c.id, label: c.label, createdAt: c.created_at };
      }),
    list: () => guard(async () => (await remote.checkpoints()).map((c) => ({ id: c.id, label: c.label, createdAt: c.created_at }))),
    restore: (cp) => guard(() => remote.restore(cp)),
    diff: (from, to = "") =>
      guard(async () => {
        const state = (s: string) => (s === "" ? remote.name : s.includes("@") ? s : `${remote.name}@${s}`);
        const changes = await remote.client.diff(state(from), state(to));
        return changes.map((c) => (c.old_path ? { op: c.op, path: c.path, oldPath: c.old_path } : { op: c.op, path: c.path }));
      }),
    fork: (name) =>
      guard(async () => {
        const info = await (await remote.fork(name)).info();
        return { providerId, ref: { workspace_id: info.id }, capabilities: { ...caps }, schemaVersion: REF_SCHEMA_VERSION };
      }),
  };
}

/**
 * A ref from its JSON text, in the seed's spelling (`providerId`, `ref`,
 * `capabilities`, `schemaVersion`) or the Go provider package's
 * (`provider_id`, `ref`, `capabilities`, `schema_version`, which also
 * reads `schemaVersion`). Strict as the Go decoder is: an unknown key, a
 * missing provider ID, or two spellings that disagree is a permanent
 * WorkspaceFailedError. The schema version is checked by resolve(), not here.
 */
export function decodeRef(json: string): WorkspaceRef {
  let o: unknown;
  try {
    o = JSON.parse(json);
  } catch (e) {
    throw new WorkspaceFailedError(`decode ref: not JSON: ${(e as Error).message}`);
  }
  if (!o || typeof o !== "object" || Array.isArray(o)) throw new WorkspaceFailedError("decode ref: not a JSON object");
  const r = o as Record<string, unknown>;
  const known = new Set(["providerId", "provider_id", "ref", "capabilities", "schemaVersion", "schema_version"]);
  const unknown = Object.keys(r).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new WorkspaceFailedError(`decode ref: unknown keys ${unknown.join(", ")}`);
  const pick = (a: string, b: string) => {
    if (r[a] !== undefined && r[b] !== undefined && r[a] !== r[b]) {
      throw new WorkspaceFailedError(`decode ref: ${a} ${JSON.stringify(r[a])} and ${b} ${JSON.stringify(r[b])} disagree`);
    }
    return r[a] ?? r[b];
  };
  const providerId = pick("providerId", "provider_id");
  if (typeof providerId !== "string" || providerId === "") throw new WorkspaceFailedError("decode ref: no providerId");
  const caps = (r.capabilities ?? {}) as Record<string, unknown>;
  if (typeof caps !== "object" || Array.isArray(caps)) throw new WorkspaceFailedError("decode ref: capabilities is not an object");
  const capabilities: WorkspaceCapabilityFlags = Object.fromEntries(Object.entries(caps).map(([k, v]) => [k, Boolean(v)]));
  const v = pick("schemaVersion", "schema_version");
  return v === undefined ? { providerId, ref: r.ref, capabilities } : { providerId, ref: r.ref, capabilities, schemaVersion: v as number };
}

/** A ref as the Go provider package's JSON (provider.Ref), which its strict decoder reads. */
export function toGoJSON(ref: WorkspaceRef): string {
  const caps: Record<string, boolean> = {};
  for (const k of ["fs", "shell", "snapshot"] as const) if (ref.capabilities[k]) caps[k] = true;
  const o: Record<string, unknown> = { provider_id: ref.providerId, ref: ref.ref ?? null, capabilities: caps };
  if (ref.schemaVersion !== undefined) o.schema_version = ref.schemaVersion;
  return JSON.stringify(o);
}
