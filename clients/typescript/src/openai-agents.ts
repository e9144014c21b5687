/**
 * A sandbox client for the OpenAI Agents SDK (npm `@openai/agents`, whose
 * `@openai/agents/sandbox` re-exports `@openai/agents-core/sandbox`):
 * {@link ForkspaceSandboxClient} implements its `SandboxClient` (create,
 * resume, delete, serialize/deserialize session state) and the sessions it
 * returns implement `SandboxSession` over a forkspace workspace: exec and
 * execCommand (the shell capability's tool), readFile, listDir, pathExists,
 * directoryExists, materializeEntry and applyManifest for `file` and `dir`
 * manifest entries, persistWorkspace/hydrateWorkspace as tar archives, and
 * delete/close. The shapes are restated from @openai/agents-core 0.20 so
 * this module has no dependency on it; the tests check them against the
 * published package.
 *
 * The manifest's root (default "/workspace") is the workspace's root: an
 * absolute path under it, or a relative one, names a workspace path; a path
 * outside it is refused. The serialized session state holds the workspace
 * ID and name only (no token): resume reattaches to the same workspace.
 */

import { Client, Workspace } from "./client.js";
import { NotFound } from "./errors.js";

/** A manifest entry (the `file` and `dir` kinds are materialized; others are refused). */
export interface SandboxEntry {
  type: string;
  content?: string | Uint8Array;
  children?: Record<string, SandboxEntry>;
}

/** The part of an Agents SDK Manifest (or ManifestInit) this client reads. */
export interface ManifestLike {
  readonly root?: string;
  readonly entries?: Readonly<Record<string, SandboxEntry>>;
}

/** The session state: the SDK's fields and this backend's workspace. */
export interface ForkspaceSandboxState<M extends ManifestLike = ManifestLike> {
  manifest: M;
  workspaceReady?: boolean;
  /** The forkspace workspace's ID (what resume reattaches to). */
  workspaceId: string;
  /** Its name when created (for people reading the state). */
  workspaceName: string;
  [key: string]: unknown;
}

export interface ExecCommandArgs {
  cmd: string;
  workdir?: string;
  shell?: string;
  login?: boolean;
  tty?: boolean;
  yieldTimeMs?: number;
  maxOutputTokens?: number;
  runAs?: string;
}

export interface SandboxExecResult {
  output: string;
  stdout: string;
  stderr: string;
  wallTimeSeconds: number;
  exitCode?: number | null;
}

export interface SandboxDirectoryEntry {
  name: string;
  path: string;
  type: "file" | "dir" | "other";
}

/** Options of {@link ForkspaceSandboxClient.create}. */
export interface ForkspaceSandboxOptions {
  /** Open this workspace (created if missing) instead of a new one. */
  workspace?: string;
  /** Create the new workspace as a fork of this state (NAME or NAME@CHECKPOINT). */
  forkFrom?: string;
  [key: string]: unknown;
}

function quote(s: string): string {
  return "'" + s.replace(/'/g, "'\\''") + "'";
}

function normRoot(root?: string): string {
  const r = (root ?? "/workspace").replace(/\/+$/, "");
  return r === "" ? "/" : r;
}

/** A live sandbox session over one workspace. */
export class ForkspaceSandboxSession<M extends ManifestLike = ManifestLike> {
  state: ForkspaceSandboxState<M>;
  readonly workspace: Workspace;
  private closed = false;

  constructor(workspace: Workspace, state: ForkspaceSandboxState<M>) {
    this.workspace = workspace;
    this.state = state;
  }

  /** The workspace path of a sandbox path (absolute under the manifest root, or relative to it). */
  rel(path: string): string {
    const root = normRoot(this.state.manifest.root);
    let p = path;
    if (p.startsWith("/")) {
      if (p === root) return "";
      if (root !== "/" && !p.startsWith(root + "/")) throw new Error(`forkspace sandbox: path ${JSON.stringify(path)} is outside the workspace root ${root}`);
      p = root === "/" ? p : p.slice(root.length);
    }
    const segs = p.split("/").filter((s) => s !== "" && s !== ".");
    if (segs.includes("..")) throw new Error(`forkspace sandbox: path ${JSON.stringify(path)} has a ".." segment`);
    return segs.join("/");
  }

  private usable(): void {
    if (this.closed) throw new Error(`forkspace sandbox: session of workspace ${this.state.workspaceName} is closed`);
  }

  async running(): Promise<boolean> {
    return !this.closed;
  }

  /** Run a command in the workspace's sandbox (/bin/sh -c, from `workdir`). */
  async exec(args: ExecCommandArgs): Promise<SandboxExecResult> {
    this.usable();
    const start = Date.now();
    const dir = args.workdir ? this.rel(args.workdir) : "";
    const cmd = dir ? `cd ${quote(dir)} && ${args.cmd}` : args.cmd;
    const r = await this.workspace.exec(cmd, { maxOutput: args.maxOutputTokens ? args.maxOutputTokens * 4 : undefined });
    const output = r.stderr ? (r.stdout ? `${r.stdout}${r.stdout.endsWith("\n") ? "" : "\n"}${r.stderr}` : r.stderr) : r.stdout;
    return { output, stdout: r.stdout, stderr: r.stderr, wallTimeSeconds: (Date.now() - start) / 1000, exitCode: r.killed ? null : r.exit_code };
  }

  /** exec, formatted for a model as the SDK's shell tool formats it. */
  async execCommand(args: ExecCommandArgs): Promise<string> {
    const r = await this.exec(args);
    const lines = [`Wall time: ${r.wallTimeSeconds.toFixed(4)} seconds`];
    if (typeof r.exitCode === "number") lines.push(`Process exited with code ${r.exitCode}`);
    lines.push("Output:", r.output);
    return lines.join("\n");
  }

  async readFile(args: { path: string; maxBytes?: number }): Promise<Uint8Array> {
    this.usable();
    return this.workspace.readBytes(this.rel(args.path), args.maxBytes ? { offset: 0, length: args.maxBytes } : {});
  }

  async listDir(args: { path: string }): Promise<SandboxDirectoryEntry[]> {
    this.usable();
    const base = this.rel(args.path);
    const root = normRoot(this.state.manifest.root);
    const out: SandboxDirectoryEntry[] = [];
    for await (const e of this.workspace.listdir(base)) {
      const p = [root === "/" ? "" : root, base, e.name].filter((s) => s !== "").join("/");
      out.push({ name: e.name, path: p.startsWith("/") ? p : "/" + p, type: e.type === "file" ? "file" : e.type === "dir" ? "dir" : "other" });
    }
    return out;
  }

  async pathExists(path: string): Promise<boolean> {
    this.usable();
    return this.workspace.exists(this.rel(path));
  }

  async directoryExists(path: string): Promise<boolean> {
    this.usable();
    try {
      return (await this.workspace.stat(this.rel(path))).type === "dir";
    } catch (e) {
      if (e instanceof NotFound) return false;
      throw e;
    }
  }

  /** Write one manifest entry (file or dir, recursively) at `path`. */
  async materializeEntry(args: { path: string; entry: SandboxEntry }): Promise<void> {
    this.usable();
    const p = this.rel(args.path);
    const e = args.entry;
    switch (e.type) {
      case "file": {
        const dir = p.split("/").slice(0, -1).join("/");
        if (dir) await this.workspace.mkdir(dir, { parents: true });
        await this.workspace.write(p, e.content ?? "");
        return;
      }
      case "dir":
        if (p) await this.workspace.mkdir(p, { parents: true });
        for (const [name, child] of Object.entries(e.children ?? {})) {
          await this.materializeEntry({ path: p ? `${p}/${name}` : name, entry: child });
        }
        return;
      default:
        throw new Error(`forkspace sandbox: manifest entry ${JSON.stringify(args.path)} of type ${JSON.stringify(e.type)} is not supported (file and dir are; forkspace mounts attach git, S3 and host sources)`);
    }
  }

  /** Materialize every entry of a manifest. */
  async applyManifest(manifest: ManifestLike): Promise<void> {
    for (const [path, entry] of Object.entries(manifest.entries ?? {})) await this.materializeEntry({ path, entry });
  }

  /** The whole workspace as a tar archive. */
  async persistWorkspace(): Promise<Uint8Array> {
    this.usable();
    return new Uint8Array(await new Response(await this.workspace.exportTar()).arrayBuffer());
  }

  /** Unpack a tar archive into the workspace, atomically. */
  async hydrateWorkspace(data: string | ArrayBuffer | Uint8Array): Promise<void> {
    this.usable();
    await this.workspace.importTar(typeof data === "string" ? new TextEncoder().encode(data) : data instanceof Uint8Array ? data : new Uint8Array(data));
  }

  supportsPty(): boolean {
    return false;
  }

  /** Delete the workspace. */
  async delete(): Promise<void> {
    await this.workspace.delete().catch((e: unknown) => (e instanceof NotFound ? undefined : Promise.reject(e)));
    this.closed = true;
  }

  /** End the session; the workspace stays (resume reattaches). */
  async close(): Promise<void> {
    this.closed = true;
  }
}

/**
 * The Agents SDK SandboxClient of forkspace workspaces. `M` is the
 * manifest type the session state carries (the SDK's Manifest).
 */
export class ForkspaceSandboxClient<M extends ManifestLike = ManifestLike> {
  readonly backendId = "forkspace";
  readonly supportsDefaultOptions = true;
  private readonly client: Client;

  constructor(opts: { client?: Client; url?: string; token?: string } = {}) {
    this.client = opts.client ?? new Client({ url: opts.url, token: opts.token });
  }

  /**
   * A session on a new workspace (or `options.workspace`, opened or
   * created; or a fork of `options.forkFrom`), with the manifest's file and
   * dir entries written into it.
   */
  async create(
    args?: { manifest?: M | ManifestLike; options?: ForkspaceSandboxOptions; [key: string]: unknown } | M,
    manifestOptions?: ForkspaceSandboxOptions,
  ): Promise<ForkspaceSandboxSession<M>> {
    // create(args) or create(manifest, options), as the SDK's SandboxClientCreate
    const isManifest = args !== undefined && ("entries" in args || "root" in args);
    // (the SDK's runtime hands a Manifest; a ManifestInit is kept as given)
    const a = (isManifest ? {} : (args ?? {})) as { manifest?: M; options?: ForkspaceSandboxOptions };
    const manifest = (isManifest ? (args as M) : a.manifest) ?? ({ root: "/workspace", entries: {} } as M);
    const options: ForkspaceSandboxOptions = (isManifest ? manifestOptions : a.options) ?? {};
    const name = options.workspace ?? `sandbox-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    let ws: Workspace;
    try {
      await this.client.workspace(name).info();
      ws = this.client.workspace(name);
    } catch (e) {
      if (!(e instanceof NotFound)) throw e;
      ws = options.forkFrom ? await this.client.workspace(options.forkFrom).fork(name) : await this.client.createWorkspace(name);
    }
    const info = await ws.info();
    const session = new ForkspaceSandboxSession<M>(this.client.workspace(info.id), { manifest, workspaceReady: false, workspaceId: info.id, workspaceName: info.name });
    await session.applyManifest(manifest);
    session.state.workspaceReady = true;
    return session;
  }

  /** Reattach to the workspace of a session state. */
  async resume(state: ForkspaceSandboxState<M>): Promise<ForkspaceSandboxSession<M>> {
    await this.client.workspace(state.workspaceId).info();
    return new ForkspaceSandboxSession<M>(this.client.workspace(state.workspaceId), { ...state, workspaceReady: true });
  }

  async delete(state: ForkspaceSandboxState<M>): Promise<void> {
    await this.client
      .workspace(state.workspaceId)
      .delete()
      .catch((e: unknown) => (e instanceof NotFound ? undefined : Promise.reject(e)));
  }

  /** The state as JSON-safe data: the workspace's ID and name and the manifest's root (no token, no file contents). */
  async serializeSessionState(state: ForkspaceSandboxState<M>): Promise<Record<string, unknown>> {
    return { workspaceId: state.workspaceId, workspaceName: state.workspaceName, root: normRoot(state.manifest.root) };
  }

  /** The state back from {@link serializeSessionState}'s data; its manifest carries the root only. */
  async deserializeSessionState(data: Record<string, unknown>): Promise<ForkspaceSandboxState<M>> {
    if (typeof data.workspaceId !== "string" || data.workspaceId === "") throw new Error("forkspace sandbox: session state has no workspaceId");
    return {
      manifest: { root: typeof data.root === "string" ? data.root : "/workspace", entries: {} } as M,
      workspaceId: data.workspaceId,
      workspaceName: typeof data.workspaceName === "string" ? data.workspaceName : data.workspaceId,
      workspaceReady: true,
    };
  }
}
