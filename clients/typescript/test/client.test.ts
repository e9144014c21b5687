/** The client against a real server: every call, streaming, and bad input. */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import {
  AlreadyExists,
  Client,
  Conflict,
  ConnectionFailed,
  DirectoryNotEmpty,
  ForkspaceError,
  InvalidArgument,
  IsADirectory,
  NotFound,
  PreconditionFailed,
  QuotaExceeded,
  RangeNotSatisfiable,
  ReadOnly,
  type Workspace,
} from "../src/index.js";
import { fresh, startServer, type Server } from "./server.js";

let server: Server;
let client: Client;
let tmp: string;

before(async () => {
  server = await startServer();
  client = new Client({ url: server.url, token: "" });
  tmp = mkdtempSync(join(tmpdir(), "forkspace-ts-files-"));
});
after(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

async function withWorkspace(fn: (ws: Workspace) => Promise<void>): Promise<void> {
  const ws = await client.createWorkspace(fresh());
  try {
    await fn(ws);
  } finally {
    await ws.delete().catch(() => {});
  }
}

test("files round trip", () =>
  withWorkspace(async (ws) => {
    const e = await ws.write("b.txt", "hello\n");
    assert.equal(e.type, "file");
    assert.equal(e.size, 6);
    assert.ok(e.etag);
    assert.equal(await ws.readText("b.txt"), "hello\n");
    assert.equal(await ws.readText("b.txt", { offset: 1, length: 3 }), "ell");
    await ws.mkdir("d/e", { parents: true });
    await ws.write("d/e/f.bin", new Uint8Array(Array.from({ length: 256 }, (_, i) => i)));
    assert.deepEqual((await ws.readdir("")).map((x) => x.name), ["b.txt", "d"]);
    assert.equal((await ws.stat("d/e/f.bin")).size, 256);
    await ws.rename("b.txt", "d/c.txt");
    assert.equal(await ws.exists("b.txt"), false);
    assert.equal(await ws.exists("d/c.txt"), true);
    await assert.rejects(ws.remove("d"), DirectoryNotEmpty);
    await ws.remove("d", { recursive: true });
    assert.deepEqual(await ws.readdir(""), []);
    assert.match(await ws.glob("**"), /^$|/);
  }));

test("names with spaces, unicode and reserved characters", () =>
  withWorkspace(async (ws) => {
    const p = "dir with space/ünï?#%&.txt";
    await ws.mkdir("dir with space");
    await ws.write(p, "x");
    assert.equal(await ws.readText(p), "x");
    assert.deepEqual((await ws.readdir("dir with space")).map((x) => x.name), ["ünï?#%&.txt"]);
  }));

test("listdir pages", () =>
  withWorkspace(async (ws) => {
    await ws.mkdir("many");
    for (let i = 0; i < 25; i++) await ws.write(`many/f${String(i).padStart(3, "0")}`, "x");
    const names: string[] = [];
    for await (const e of ws.listdir("many", { pageSize: 7 })) names.push(e.name);
    assert.deepEqual(names, Array.from({ length: 25 }, (_, i) => `f${String(i).padStart(3, "0")}`));
  }));

test("streaming upload and download of 24 MiB", () =>
  withWorkspace(async (ws) => {
    const size = 24 * 1024 * 1024 + 123;
    const src = join(tmp, "big.bin");
    writeFileSync(src, randomBytes(size));
    const e = await ws.write("big.bin", createReadStream(src, { highWaterMark: 1 << 16 }));
    assert.equal(e.size, size);
    const dst = join(tmp, "back.bin");
    const n = await ws.download("big.bin", Writable.toWeb(createWriteStream(dst)) as WritableStream<Uint8Array>);
    assert.equal(n, size);
    assert.ok(readFileSync(dst).equals(readFileSync(src)));
    const part = await ws.readBytes("big.bin", { offset: size - 10 });
    assert.deepEqual(Buffer.from(part), readFileSync(src).subarray(size - 10));
  }));

test("a failing stream uploads nothing", () =>
  withWorkspace(async (ws) => {
    await ws.write("keep.txt", "old");
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode("partial ");
      throw new Error("source failed");
    }
    await assert.rejects(ws.write("keep.txt", broken()));
    assert.equal(await ws.readText("keep.txt"), "old");
  }));

test("conditional writes", () =>
  withWorkspace(async (ws) => {
    const e = await ws.write("c.txt", "one", { createOnly: true });
    await assert.rejects(ws.write("c.txt", "two", { createOnly: true }), PreconditionFailed);
    await ws.write("c.txt", "two", { ifMatch: e.etag });
    await assert.rejects(ws.write("c.txt", "three", { ifMatch: e.etag }), PreconditionFailed);
    assert.equal(await ws.readText("c.txt"), "two");
  }));

test("errors are typed", () =>
  withWorkspace(async (ws) => {
    const err = await ws.readBytes("missing.txt").catch((e: unknown) => e);
    assert.ok(err instanceof NotFound);
    assert.ok(err instanceof ForkspaceError);
    assert.equal(err.status, 404);
    assert.equal(err.code, "not_found");
    await assert.rejects(client.workspace("no-such-workspace").info(), NotFound);
    await assert.rejects(client.createWorkspace(ws.name), AlreadyExists);
    await assert.rejects(client.createWorkspace("bad/name"), InvalidArgument);
    await ws.mkdir("dir");
    await assert.rejects(ws.readBytes("dir"), IsADirectory);
    await ws.write("r.txt", "abc");
    await assert.rejects(ws.readBytes("r.txt", { offset: 10, length: 2 }), RangeNotSatisfiable);
    assert.throws(() => new Client({ url: "ftp://example.com" }), TypeError);
    // fetch resolves dot segments in a URL (encoded or not): refused
    // before anything is sent, where they would reach another route
    for (const p of ["../escape", "a/../../x", "./..", "../../other/files/x"]) {
      await assert.rejects(ws.write(p, "x"), InvalidArgument);
    }
    await assert.rejects(ws.stat("a/./b"), InvalidArgument);
    for (const name of ["", ".", ".."]) assert.throws(() => client.workspace(name), InvalidArgument);
    await assert.rejects(client.createWorkspace(".."), InvalidArgument);
    assert.deepEqual((await ws.readdir("")).map((e) => e.name), ["dir", "r.txt"]); // nothing written
  }));

test("a quota-exceeding write is atomic", async () => {
  const small = await client.createWorkspace(fresh("quota"), { quota: { maxBytes: 1000 } });
  try {
    await small.write("keep.txt", "k".repeat(100));
    async function* big(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 5; i++) yield new Uint8Array(1000).fill(120);
    }
    await assert.rejects(small.write("big.bin", big()), QuotaExceeded);
    await assert.rejects(small.write("keep.txt", "y".repeat(5000)), QuotaExceeded);
    assert.equal(await small.exists("big.bin"), false);
    assert.equal(await small.readText("keep.txt"), "k".repeat(100));
  } finally {
    await small.delete();
  }
});

test("checkpoints, fork, diff, merge, compare", () =>
  withWorkspace(async (ws) => {
    await ws.write("notes.md", "line 1\nline 2\nline 3\n");
    const cp = await ws.checkpoint("before");
    assert.equal(cp.label, "before");
    assert.deepEqual((await ws.checkpoints()).map((c) => c.label), ["before"]);
    const fork = await ws.fork(ws.name + "-fork");
    try {
      assert.ok(await fork.parent());
      await fork.write("notes.md", "line 1 (fork)\nline 2\nline 3\n");
      await ws.write("notes.md", "line 1\nline 2\nline 3 (head)\n");
      assert.deepEqual((await ws.diff(ws.name + "@before")).map((c) => c.path), ["notes.md"]);
      assert.match(await ws.diff(ws.name + "@before", { unified: true }), /\+line 3 \(head\)/);
      const cmp = await client.compare([ws.name, fork.name, ws.name + "@before"]);
      assert.equal(cmp.changes[0][1], 1);
      const res = await ws.merge(fork.name);
      assert.deepEqual(res.conflicts, []);
      assert.deepEqual(res.changed, ["notes.md"]);
      assert.equal(await ws.readText("notes.md"), "line 1 (fork)\nline 2\nline 3 (head)\n");
      await ws.restore("before");
      assert.equal(await ws.readText("notes.md"), "line 1\nline 2\nline 3\n");
      assert.equal(await ws.at("before").readText("notes.md"), "line 1\nline 2\nline 3\n");
      await assert.rejects(ws.at("before").write("x", "y"), ReadOnly);
      await fork.write("only-fork.txt", "f");
      const picked = await ws.cherryPick(fork.name, ["only-fork.txt"]);
      assert.deepEqual(picked.changed, ["only-fork.txt"]);
    } finally {
      await fork.delete();
    }
  }));

test("fork-n and promote", () =>
  withWorkspace(async (ws) => {
    await ws.write("a.txt", "base\n");
    const forks = await ws.forkN(2, { prefix: ws.name + "-try" });
    const names = forks.map((f) => f.name).sort();
    assert.equal(names.length, 2);
    await client.workspace(names[0]).write("a.txt", "winner\n");
    const r = await client.workspace(names[0]).promote();
    assert.equal(r.winner, names[0]);
    assert.equal(await ws.readText("a.txt"), "winner\n");
    await assert.rejects(client.workspace(names[1]).info(), NotFound);
  }));

test("merge conflicts are data; the fail policy throws Conflict and changes nothing", () =>
  withWorkspace(async (ws) => {
    await ws.write("f.txt", "base\n");
    const fork = await ws.fork(ws.name + "-c");
    try {
      await fork.write("f.txt", "theirs\n");
      await ws.write("f.txt", "ours\n");
      const err = await ws.merge(fork.name, { policy: "fail" }).catch((e: unknown) => e);
      assert.ok(err instanceof Conflict);
      assert.deepEqual(err.result?.conflicts.map((c) => (c as { path: string }).path), ["f.txt"]);
      assert.equal(await ws.readText("f.txt"), "ours\n");
      const res = await ws.merge(fork.name);
      assert.deepEqual(res.conflicts.map((c) => c.path), ["f.txt"]);
      assert.deepEqual((await ws.conflicts()).map((c) => c.path), ["f.txt"]);
      assert.equal(await ws.resolve("f.txt", "theirs"), 0);
      assert.equal(await ws.readText("f.txt"), "theirs\n");
    } finally {
      await fork.delete();
    }
  }));

test("exec streams output as it comes and returns what changed", () =>
  withWorkspace(async (ws) => {
    const out: Uint8Array[] = [];
    const r = await ws.exec("echo hi; echo made > made.txt; echo oops >&2; exit 3", { onStdout: (b) => out.push(b) });
    assert.equal(r.exit_code, 3);
    assert.equal(Buffer.concat(out).toString(), "hi\n");
    assert.match(r.stderr, /oops/);
    assert.deepEqual(r.changed?.map((c) => c.path), ["made.txt"]);
    assert.equal(await ws.readText("made.txt"), "made\n");
  }));

test("tar import and export", () =>
  withWorkspace(async (ws) => {
    await ws.mkdir("src/sub", { parents: true });
    await ws.write("src/sub/x.txt", "from a tar");
    const tar = Buffer.from(await new Response(await ws.exportTar({ from: "src" })).arrayBuffer());
    const r = await ws.importTar(tar, { to: "copy" });
    assert.ok(r.entries >= 1);
    assert.equal(await ws.readText("copy/sub/x.txt"), "from a tar");
  }));

test("grep finds text", () =>
  withWorkspace(async (ws) => {
    await ws.write("g.txt", "alpha\nneedle here\nomega\n");
    assert.match(await ws.grep("needle"), /g\.txt:2:needle here/);
    assert.match(await ws.glob("*.txt"), /g\.txt/);
  }));

test("workspaces, audit, space and the OpenAPI document", () =>
  withWorkspace(async (ws) => {
    await ws.write("a", "b");
    const names: string[] = [];
    for await (const w of client.workspaces({ pageSize: 1 })) names.push(w.name);
    assert.ok(names.includes(ws.name));
    assert.equal((await ws.info()).name, ws.name);
    assert.ok((await client.df()).workspaces.some((w) => w.name === ws.name));
    assert.equal((await client.gc({ dryRun: true })).dry_run, true);
    const entries = await client.audit({ workspace: ws.name, limit: 5 });
    assert.ok(entries.length > 0);
    assert.ok(entries.filter((e) => String(e.tool).startsWith("rest.")).every((e) => e.actor === "typescript"));
    const doc = await client.openapi();
    assert.ok((doc.paths as Record<string, unknown>)["/v1/workspaces/{ws}/exec"]);
  }));

test("an unreachable server is ConnectionFailed", async () => {
  const c = new Client({ url: "http://127.0.0.1:1" });
  await assert.rejects(c.workspace("x").info(), ConnectionFailed);
});

