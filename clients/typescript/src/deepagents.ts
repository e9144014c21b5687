/**
 * A deepagents (npm `deepagents`) backend over a forkspace workspace:
 * {@link ForkspaceBackend} implements deepagents' `SandboxBackendProtocolV2`
 * (ls, read, readRaw, write, edit, grep, glob, delete, uploadFiles,
 * downloadFiles, execute, id), so an agent's file tools and shell work on
 * a durable, forkable workspace. The types below restate the protocol's
 * shapes (deepagents 1.14) so this module has no dependency on deepagents;
 * the tests check them against the published package.
 *
 * Paths are absolute ("/src/a.ts") and name workspace paths. Failures are
 * results with `error` set, as the protocol wants; a workspace that is
 * gone, or a server that cannot be reached, is such an error too.
 */

import { Workspace } from "./client.js";
import { ForkspaceError, IsADirectory, NotFound, PermissionDenied, PreconditionFailed, ReadOnly } from "./errors.js";
import { parseGrep } from "./provider.js";

/** deepagents' FileInfo. */
export interface FileInfo {
  path: string;
  is_dir?: boolean;
  size?: number;
  modified_at?: string;
}
/** deepagents' FileDataV2. */
export interface FileData {
  content: string | Uint8Array;
  mimeType: string;
  created_at: string;
  modified_at: string;
}
export interface ReadResult {
  error?: string;
  content?: string | Uint8Array;
  mimeType?: string;
  totalLines?: number;
  startLine?: number;
  endLine?: number;
  nextOffset?: number;
}
export interface ReadRawResult {
  error?: string;
  data?: FileData;
}
export interface LsResult {
  error?: string;
  files?: FileInfo[];
}
export interface GlobResult {
  error?: string;
  files?: FileInfo[];
  truncated?: boolean;
}
export interface GrepMatch {
  path: string;
  line: number;
  text: string;
}
export interface GrepResult {
  error?: string;
  matches?: GrepMatch[];
  truncated?: boolean;
}
export interface WriteResult {
  error?: string;
  path?: string;
  filesUpdate?: null;
}
export interface EditResult {
  error?: string;
  path?: string;
  filesUpdate?: null;
  occurrences?: number;
}
export interface DeleteResult {
  error?: string;
  path?: string;
  filesUpdate?: null;
}
export interface ExecuteResponse {
  output: string;
  exitCode: number | null;
  truncated: boolean;
}
export type FileOperationError = "file_not_found" | "permission_denied" | "is_directory" | "invalid_path";
export interface FileDownloadResponse {
  path: string;
  content: Uint8Array | null;
  error: FileOperationError | null;
}
export interface FileUploadResponse {
  path: string;
  error: FileOperationError | null;
}

/** Extensions deepagents reads as binary (its MIME table); everything else is text. */
const BINARY_MIME: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".heic": "image/heic",
  ".heif": "image/heif",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".aiff": "audio/aiff",
  ".aac": "audio/aac",
  ".ogg": "audio/ogg",
  ".flac": "audio/flac",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".pdf": "application/pdf",
};

function mimeType(path: string): string {
  const dot = path.lastIndexOf(".");
  return (dot >= 0 && BINARY_MIME[path.slice(dot).toLowerCase()]) || "text/plain";
}

/** Options of a {@link ForkspaceBackend}. */
export interface ForkspaceBackendOptions {
  /** Output cap of execute(), in bytes per stream (default: the server's). */
  maxOutput?: number;
  /** Timeout of execute(), in milliseconds (default: the server's). */
  timeoutMs?: number;
}

/** A deepagents SandboxBackendProtocolV2 over one forkspace workspace. */
export class ForkspaceBackend {
  /** The sandbox's identifier: the workspace's name. */
  readonly id: string;
  readonly workspace: Workspace;
  private readonly opts: ForkspaceBackendOptions;

  constructor(workspace: Workspace, opts: ForkspaceBackendOptions = {}) {
    this.workspace = workspace;
    this.id = workspace.name;
    this.opts = opts;
  }

  async ls(path: string): Promise<LsResult> {
    try {
      const base = rel(path);
      const files: FileInfo[] = [];
      for await (const e of this.workspace.listdir(base)) {
        const p = abs(base ? `${base}/${e.name}` : e.name);
        files.push(e.type === "dir" ? { path: p + "/", is_dir: true, size: 0, modified_at: e.mtime } : { path: p, is_dir: false, size: e.size, modified_at: e.mtime });
      }
      return { files };
    } catch (e) {
      return { error: message(e, path) };
    }
  }

  /** Lines `offset` (0-based) to `offset + limit` of a text file, or a binary file whole. */
  async read(filePath: string, offset = 0, limit = 500): Promise<ReadResult> {
    try {
      const bytes = await this.workspace.readBytes(rel(filePath));
      const mime = mimeType(filePath);
      if (mime !== "text/plain") return { content: bytes, mimeType: mime };
      const content = new TextDecoder().decode(bytes);
      const lines = content.split("\n");
      const totalLines = lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
      if (totalLines === 0) return { content: "", mimeType: mime, totalLines: 0 };
      const from = Number.isFinite(offset) ? Math.max(0, Math.floor(offset)) : 0;
      const count = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
      if (from >= totalLines) return { error: `Line offset ${from} exceeds file length (${totalLines} lines)` };
      const end = Math.min(from + count, totalLines);
      const result: ReadResult = { content: lines.slice(from, end).join("\n"), mimeType: mime, totalLines, startLine: from + 1, endLine: end };
      if (end < totalLines) result.nextOffset = end;
      return result;
    } catch (e) {
      return { error: message(e, filePath) };
    }
  }

  async readRaw(filePath: string): Promise<ReadRawResult> {
    try {
      const [bytes, st] = await Promise.all([this.workspace.readBytes(rel(filePath)), this.workspace.stat(rel(filePath))]);
      const mime = mimeType(filePath);
      const content = mime === "text/plain" ? new TextDecoder().decode(bytes) : bytes;
      return { data: { content, mimeType: mime, created_at: st.ctime ?? st.mtime, modified_at: st.mtime } };
    } catch (e) {
      return { error: message(e, filePath) };
    }
  }

  /** Create or replace a file whole (its directories too), atomically. */
  async write(filePath: string, content: string): Promise<WriteResult> {
    try {
      await this.put(filePath, content);
      return { path: filePath, filesUpdate: null };
    } catch (e) {
      return { error: message(e, filePath) };
    }
  }

  /**
   * Replace `oldString` by `newString` (once, unless `replaceAll`), with
   * deepagents' rules and messages. The write is conditional on the ETag
   * read, so an edit never overwrites a change made meanwhile by another
   * door: it fails and says to read again.
   */
  async edit(filePath: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    try {
      const st = await this.workspace.stat(rel(filePath));
      if (st.type !== "file") return { error: `Error: File '${filePath}' not found` };
      const content = new TextDecoder().decode(await this.workspace.readBytes(rel(filePath)));
      let out: string;
      let occurrences: number;
      if (content === "" && oldString === "") [out, occurrences] = [newString, 0];
      else if (oldString === "") return { error: "Error: oldString cannot be empty when file has content" };
      else {
        occurrences = content.split(oldString).length - 1;
        if (occurrences === 0) return { error: `Error: String not found in file: '${oldString}'` };
        if (occurrences > 1 && !replaceAll) {
          return {
            error: `Error: String '${oldString}' has multiple occurrences (appears ${occurrences} times) in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context.`,
          };
        }
        out = content.split(oldString).join(newString);
      }
      await this.workspace.write(rel(filePath), out, { ifMatch: st.etag });
      return { path: filePath, filesUpdate: null, occurrences };
    } catch (e) {
      if (e instanceof PreconditionFailed) return { error: `Error: '${filePath}' changed while it was being edited; read it again and retry the edit` };
      if (e instanceof NotFound) return { error: `Error: File '${filePath}' not found` };
      return { error: message(e, filePath) };
    }
  }

  /** Lines containing `pattern` (literal text) under `path`, in files matching `glob`. */
  async grep(pattern: string, path?: string | null, glob?: string | null, maxCount?: number | null): Promise<GrepResult> {
    try {
      const text = await this.workspace.grep(pattern, { literal: true, path: path ? rel(path) || undefined : undefined, glob: glob ?? undefined, maxResults: maxCount ?? undefined });
      const matches = parseGrep(text).map((m) => ({ path: m.path, line: m.lineNumber, text: m.line }));
      const truncated = text.includes("\n… stopped at max_results=") || text.startsWith("… stopped at max_results=");
      return truncated ? { matches, truncated } : { matches };
    } catch (e) {
      return { error: message(e, path ?? "/") };
    }
  }

  /** Paths matching `pattern` (doublestar syntax) relative to `path`. */
  async glob(pattern: string, path = "/"): Promise<GlobResult> {
    try {
      const base = rel(path);
      const full = base ? `${base}/${pattern.replace(/^\/+/, "")}` : pattern.replace(/^\/+/, "");
      const text = await this.workspace.glob(full);
      const files: FileInfo[] = [];
      let truncated = false;
      for (const l of text.split("\n")) {
        if (l === "" || l.startsWith("no paths match ")) continue;
        if (l.startsWith("… ")) {
          truncated = true;
          continue;
        }
        files.push(l.endsWith("/") ? { path: abs(l), is_dir: true } : { path: abs(l), is_dir: false });
      }
      return truncated ? { files, truncated } : { files };
    } catch (e) {
      return { error: message(e, path) };
    }
  }

  /** Remove a file or a directory with everything under it. */
  async delete(filePath: string): Promise<DeleteResult> {
    try {
      await this.workspace.remove(rel(filePath), { recursive: true });
      return { path: filePath, filesUpdate: null };
    } catch (e) {
      if (e instanceof NotFound) return { error: `Error: '${filePath}' not found` };
      return { error: message(e, filePath) };
    }
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const out: FileUploadResponse[] = [];
    for (const [path, content] of files) {
      try {
        await this.put(path, content);
        out.push({ path, error: null });
      } catch (e) {
        out.push({ path, error: operationError(e) });
      }
    }
    return out;
  }

  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const out: FileDownloadResponse[] = [];
    for (const path of paths) {
      try {
        out.push({ path, content: await this.workspace.readBytes(rel(path)), error: null });
      } catch (e) {
        out.push({ path, content: null, error: operationError(e) });
      }
    }
    return out;
  }

  /** Run a shell command in the workspace's sandbox; its changes land in the workspace. */
  async execute(command: string): Promise<ExecuteResponse> {
    try {
      const r = await this.workspace.exec(command, { timeoutMs: this.opts.timeoutMs, maxOutput: this.opts.maxOutput });
      const output = r.stderr ? (r.stdout ? `${r.stdout}\n${r.stderr}` : r.stderr) : r.stdout;
      const truncated = /\[output truncated: \d+ bytes cut here\]/.test(output); // the sandbox's marker (sandbox/capped.go)
      return { output: r.killed ? `${output}\n[killed: ${r.killed}]` : output, exitCode: r.killed || r.timed_out ? null : r.exit_code, truncated };
    } catch (e) {
      return { output: `Error: ${message(e, "/")}`, exitCode: null, truncated: false };
    }
  }

  private async put(filePath: string, content: string | Uint8Array): Promise<void> {
    const p = rel(filePath);
    const dir = p.split("/").slice(0, -1).join("/");
    if (dir) await this.workspace.mkdir(dir, { parents: true });
    await this.workspace.write(p, content);
  }
}

function rel(p: string): string {
  return p.replace(/^\/+/, "").replace(/\/+$/, "");
}

function abs(p: string): string {
  return "/" + p.replace(/\/+$/, "");
}

function message(e: unknown, path: string): string {
  if (e instanceof NotFound) return `Error: '${path}' not found`;
  if (e instanceof ForkspaceError) return `Error: ${path}: ${e.message}`;
  return `Error: ${path}: ${e instanceof Error ? e.message : String(e)}`;
}

function operationError(e: unknown): FileOperationError {
  if (e instanceof NotFound) return "file_not_found";
  if (e instanceof IsADirectory) return "is_directory";
  if (e instanceof PermissionDenied || e instanceof ReadOnly) return "permission_denied";
  return "invalid_path";
}
