/**
 * A real `forkspace serve` on a fresh store for the tests. The binary is
 * $FORKSPACE_BIN (cmd/forkspace's TestTypeScriptSDK builds it), or
 * `forkspace` on PATH.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface Server {
  url: string;
  binary: string;
  env: NodeJS.ProcessEnv;
  /** Run the CLI on the server's store (it reaches the running server). */
  cli(...args: string[]): string;
  stop(): Promise<void>;
}

/** Start a server on a loopback port of its own with a store of its own. */
export async function startServer(opts: { tokens?: boolean } = {}): Promise<Server & { adminToken: string }> {
  const binary = process.env.FORKSPACE_BIN || "forkspace";
  const home = mkdtempSync(join(tmpdir(), "forkspace-ts-"));
  const env: NodeJS.ProcessEnv = { ...process.env, FORKSPACE_HOME: join(home, "store"), FORKSPACE_SERVER: "", FORKSPACE_TOKEN: "" };
  const cli = (...args: string[]) => execFileSync(binary, args, { env, encoding: "utf8" }).trim();
  cli("init");
  let adminToken = "";
  if (opts.tokens) adminToken = cli("token", "create", "--tenant", "*", "--perm", "all", "--label", "admin");
  const proc: ChildProcess = spawn(binary, ["serve", "--addr", "127.0.0.1:0"], { env, stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: proc.stderr! });
    let log = "";
    lines.on("line", (line) => {
      log += line + "\n";
      const m = /serving MCP at (\S+)\/mcp/.exec(line);
      if (m) resolve(m[1]);
    });
    proc.on("exit", (code) => reject(new Error(`forkspace serve exited (${code}) before reporting its address:\n${log}`)));
    proc.on("error", reject);
  });
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    }
    rmSync(home, { recursive: true, force: true });
  };
  return { url, binary, env, cli, stop, adminToken };
}

/** A fresh name for a workspace. */
export function fresh(prefix = "ts"): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}
