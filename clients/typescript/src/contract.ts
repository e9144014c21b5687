/**
 * The workspace-provider contract of the agent framework described by
 * seed 002 ("Building a Provider"): a provider opens a live workspace for a
 * session and a serializable ref from which it resolves it again after a
 * runtime boundary; refs carry a schema version checked by the N±1 rule;
 * capabilities declared by the agent must be a subset of those the ref
 * advertises and the live workspace populates. The Go side of forkspace
 * has the same contract in package provider.
 */

/** The modules a workspace offers. */
export interface WorkspaceCapabilityFlags {
  readonly fs?: boolean;
  readonly shell?: boolean;
  readonly code?: boolean;
  readonly snapshot?: boolean;
}

/** The session a workspace is opened for. */
export interface SessionRef {
  readonly sessionId: string;
  readonly [key: string]: unknown;
}

/** The serializable handle of a workspace: no secrets, no live objects. */
export interface WorkspaceRef {
  readonly providerId: string;
  /** The provider's serializable payload. */
  readonly ref: unknown;
  /** What the live workspace populates: authoritative. */
  readonly capabilities: WorkspaceCapabilityFlags;
  /** Absent in legacy refs; see {@link assertRefSchemaVersionSupported}. */
  readonly schemaVersion?: number;
}

/** What open() returns. */
export interface OpenedWorkspace {
  readonly ws: Workspace;
  readonly ref: WorkspaceRef;
}

/** A provider: constructed once, serving many sessions, keeping no per-session state. */
export interface WorkspaceProvider<TConfig = unknown> {
  readonly providerId: string;
  open(config: TConfig, session: SessionRef, declaredCapabilities?: WorkspaceCapabilityFlags): Promise<OpenedWorkspace>;
  resolve(ref: WorkspaceRef): Promise<Workspace>;
}

/** A file's or directory's description. */
export interface FileStat {
  path: string;
  type: "file" | "dir" | "symlink";
  size: number;
  mtime?: string;
}

/** One entry of a directory listing. */
export interface FileEntry {
  name: string;
  path: string;
  type: "file" | "dir" | "symlink";
  size: number;
}

/** Options of {@link FileSystem.grep}. */
export interface GrepOptions {
  ignoreCase?: boolean;
  /** Search under this path only. */
  path?: string;
  maxResults?: number;
}

/** One matching line. */
export interface GrepResult {
  path: string;
  lineNumber: number;
  line: string;
}

/** The fs module. */
export interface FileSystem {
  readFile(path: string): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array | string): Promise<void>;
  stat(path: string): Promise<FileStat>;
  ls(path: string): Promise<FileEntry[]>;
  glob(pattern: string): Promise<string[]>;
  grep(pattern: string, opts?: GrepOptions): Promise<GrepResult[]>;
  rm(path: string, opts?: { recursive?: boolean }): Promise<void>;
  mkdir(path: string, opts?: { recursive?: boolean }): Promise<void>;
}

/** How a command ended. */
export interface ShellResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** The shell module: commands run against the workspace's files, confined. */
export interface Shell {
  exec(command: string, opts?: { env?: Record<string, string>; timeoutMs?: number }): Promise<ShellResult>;
}

/** A checkpoint. */
export interface SnapshotInfo {
  id: string;
  label?: string;
  createdAt?: string;
}

/** The snapshot module: checkpoints, restore, diff and fork. */
export interface Snapshot {
  checkpoint(label?: string): Promise<SnapshotInfo>;
  list(): Promise<SnapshotInfo[]>;
  restore(checkpoint: string): Promise<void>;
  /** The changed paths between two states ("" the live state, a checkpoint ID or label otherwise). */
  diff(from: string, to?: string): Promise<Array<{ op: string; path: string; oldPath?: string }>>;
  /** Fork the live state into a new workspace; returns its ref. */
  fork(name: string): Promise<WorkspaceRef>;
}

/** A live workspace. Modules that were not built are undefined. */
export interface Workspace {
  readonly id: string;
  readonly fs?: FileSystem;
  readonly shell?: Shell;
  readonly snapshot?: Snapshot;
  close(): Promise<void>;
}

/** Something to log to (the framework's logger); console fits. */
export interface Logger {
  info(message: string, ...meta: unknown[]): void;
}

/**
 * The workspace cannot be opened or resolved. With `transient` the
 * registry retries (the cause may go away: a network blip, a busy server);
 * otherwise the workspace's entry fails.
 */
export class WorkspaceFailedError extends Error {
  readonly workspaceName: string;
  readonly transient: boolean;

  constructor(message: string, opts: { workspaceName?: string; transient?: boolean; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "WorkspaceFailedError";
    this.workspaceName = opts.workspaceName ?? "";
    this.transient = opts.transient ?? false;
  }
}

/**
 * Thrown by module methods (never by open or resolve) when the backing
 * resource is gone: the framework marks the entry evicted and resolves the
 * ref again.
 */
export class WorkspaceEvictedError extends Error {
  readonly workspaceName: string;

  constructor(message: string, opts: { workspaceName?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "WorkspaceEvictedError";
    this.workspaceName = opts.workspaceName ?? "";
  }
}

/**
 * The N±1 rule: resolve() accepts a ref whose schemaVersion is absent
 * (legacy), current − 1 (when ≥ 1; logged as a migration) or current;
 * anything else — another number, or a value that is no whole number —
 * throws a permanent WorkspaceFailedError naming the version and the
 * supported set.
 */
export function assertRefSchemaVersionSupported(version: unknown, providerId: string, current: number, logger?: Logger): void {
  if (version === undefined || version === current) return;
  if (version === current - 1 && current - 1 >= 1) {
    logger?.info(`workspace ref: migrating ref from v${version} to v${current}`, { providerId });
    return;
  }
  const supported = (current - 1 >= 1 ? [current - 1, current] : [current]).map((v) => `v${v}`).join(", ");
  throw new WorkspaceFailedError(
    `workspace ref of provider ${JSON.stringify(providerId)}: unsupported schemaVersion ${JSON.stringify(version)}: this build reads ${supported} or none (legacy)`,
    { workspaceName: providerId },
  );
}

const MODULES = { fs: "fs", shell: "shell", snapshot: "snapshot", code: "code" } as const;

/**
 * The registry's invariant: every capability the agent declared is truthy
 * on the ref, and its module is present on the live workspace. A mismatch
 * is a permanent WorkspaceFailedError naming what is missing.
 */
export function assertCapabilities(name: string, declared: WorkspaceCapabilityFlags | undefined, ref: WorkspaceRef, ws: Workspace): void {
  if (!declared) return;
  const missing: string[] = [];
  for (const cap of Object.keys(MODULES) as Array<keyof typeof MODULES>) {
    if (!declared[cap]) continue;
    if (!ref.capabilities[cap]) missing.push(`${cap} (not in the ref)`);
    else if ((ws as unknown as Record<string, unknown>)[cap] === undefined) missing.push(`${cap} (module not built)`);
  }
  if (missing.length > 0) {
    throw new WorkspaceFailedError(`workspace ${name}: provider ${JSON.stringify(ref.providerId)} does not provide declared capabilities: ${missing.join(", ")}`, {
      workspaceName: name,
    });
  }
}

/**
 * Run open or resolve as the registry does: a transient
 * WorkspaceFailedError is retried up to `attempts` more times with
 * exponential backoff (from `baseMs`, each wait at most `maxMs`); any other
 * error, or the last failure, is thrown.
 */
export async function retryTransient<T>(fn: () => Promise<T>, opts: { attempts?: number; baseMs?: number; maxMs?: number } = {}): Promise<T> {
  const attempts = opts.attempts ?? 3;
  let wait = opts.baseMs ?? 200;
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof WorkspaceFailedError) || !e.transient || i >= attempts) throw e;
    }
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(wait * 2, opts.maxMs ?? 5000);
  }
}
