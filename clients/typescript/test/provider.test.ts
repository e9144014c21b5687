/**
 * ForkspaceWorkspaceProvider against a real server: the seed 002 contract
 * (open/resolve/close, refs and the N±1 rule, capabilities, failed and
 * evicted errors) and its per-session isolation regression test (C10).
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  Client,
  ForkspaceWorkspaceProvider,
  NotFound,
  REF_SCHEMA_VERSION,
  WorkspaceEvictedError,
  WorkspaceFailedError,
  decodeRef,
  retryTransient,
  sessionWorkspace,
  toGoJSON,
  type ForkspaceProviderConfig,
  type OpenedWorkspace,
  type ProviderWorkspace,
  type SessionRef,
  type WorkspaceProvider,
  type WorkspaceRef,
} from "../src/index.js";
import { fresh, startServer, type Server } from "./server.js";

let server: Server;
let client: Client;
let provider: ForkspaceWorkspaceProvider;
const logged: string[] = [];
const config: ForkspaceProviderConfig = { kind: "forkspace" };

before(async () => {
  server = await startServer();
  client = new Client({ url: server.url, token: "" });
  provider = new ForkspaceWorkspaceProvider({ client, logger: { info: (m: string) => void logged.push(m) } });
});
after(() => server?.stop());

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const session = (): SessionRef => ({ sessionId: fresh("s") });

/**
 * C10: a provider is constructed once and serves many sessions, so nothing
 * a session does may be seen by another. Two sessions opened by one
 * provider instance write the same path; each reads its own bytes, sees
 * none of the other's files, and survives the other's close.
 */
async function checkSessionIsolation(p: WorkspaceProvider<ForkspaceProviderConfig>, cfg: ForkspaceProviderConfig): Promise<void> {
  const before = JSON.stringify(Object.keys(p).sort());
  const [a, b] = await Promise.all([p.open(cfg, session()), p.open(cfg, session())]);
  assert.notEqual(a.ws.id, b.ws.id, "two sessions got the same workspace");
  assert.notDeepEqual(a.ref.ref, b.ref.ref, "two sessions got the same ref payload");
  await a.ws.fs!.writeFile("/secret.txt", "session A");
  await b.ws.fs!.writeFile("/secret.txt", "session B");
  await a.ws.fs!.writeFile("/only-a/notes.md", "A's notes");
  assert.equal(text(await a.ws.fs!.readFile("/secret.txt")), "session A");
  assert.equal(text(await b.ws.fs!.readFile("/secret.txt")), "session B");
  await assert.rejects(b.ws.fs!.readFile("/only-a/notes.md"), "session B reads session A's file");
  assert.deepEqual((await b.ws.fs!.ls("/")).map((e) => e.name), ["secret.txt"]);
  assert.deepEqual(await b.ws.fs!.glob("**/*.md"), []);
  assert.deepEqual(await b.ws.fs!.grep("A's"), []);
  await a.ws.close();
  assert.equal(text(await b.ws.fs!.readFile("/secret.txt")), "session B", "closing A broke B");
  await assert.rejects(a.ws.fs!.readFile("/secret.txt"), /closed/);
  // A's workspace comes back from its ref alone, with A's bytes only.
  const again = await p.resolve(JSON.parse(JSON.stringify(a.ref)) as WorkspaceRef);
  assert.equal(text(await again.fs!.readFile("/secret.txt")), "session A");
  await again.close();
  await b.ws.close();
  assert.equal(JSON.stringify(Object.keys(p).sort()), before, "the provider grew per-session state");
}

test("C10: sessions of one provider instance are isolated", () => checkSessionIsolation(provider, config));

test("C10 catches the seed's bad pattern (workspace state kept on the provider)", async () => {
  // The seed's BadProvider: state on `this`, shared by every session.
  class Leaky implements WorkspaceProvider<ForkspaceProviderConfig> {
    readonly providerId = "forkspace";
    private shared?: Promise<OpenedWorkspace>;
    open(cfg: ForkspaceProviderConfig, s: SessionRef): Promise<OpenedWorkspace> {
      this.shared ??= provider.open(cfg, s);
      return this.shared;
    }
    resolve(ref: WorkspaceRef): Promise<ProviderWorkspace> {
      return provider.resolve(ref);
    }
  }
  await assert.rejects(checkSessionIsolation(new Leaky(), config), assert.AssertionError);
});

test("open: the ref has schemaVersion 2, the provider ID, a workspace_id and exactly the modules built", async () => {
  const { ws, ref } = await provider.open(config, session());
  assert.equal(ref.schemaVersion, REF_SCHEMA_VERSION);
  assert.equal(REF_SCHEMA_VERSION, 2);
  assert.equal(ref.providerId, "forkspace");
  assert.deepEqual(ref.capabilities, { fs: true, shell: true, snapshot: true });
  assert.deepEqual(Object.keys(ref.ref as object), ["workspace_id"]);
  assert.match((ref.ref as { workspace_id: string }).workspace_id, /^ws-/);
  assert.equal(ws.id, (ref.ref as { workspace_id: string }).workspace_id);
  assert.ok(ws.fs && ws.shell && ws.snapshot);
  assert.ok(!JSON.stringify(ref).includes("fks_"), "a secret in the ref");
  await ws.close();
});

test("declared capabilities: only declared modules are built (strategy B), declared ⊆ provided", async () => {
  const { ws, ref } = await provider.open(config, session(), { fs: true });
  assert.deepEqual(ref.capabilities, { fs: true, shell: false, snapshot: false });
  assert.ok(ws.fs);
  assert.equal(ws.shell, undefined);
  assert.equal(ws.snapshot, undefined);
  const resolved = await provider.resolve(ref);
  assert.ok(resolved.fs);
  assert.equal(resolved.shell, undefined);

  const code = await provider.open(config, session(), { fs: true, code: true }).catch((e: unknown) => e);
  assert.ok(code instanceof WorkspaceFailedError);
  assert.equal(code.transient, false);
  assert.match(code.message, /does not provide declared capabilities: code/);

  const noShell = new ForkspaceWorkspaceProvider({ client, shell: false });
  await assert.rejects(noShell.open(config, session(), { shell: true }), (e: unknown) => e instanceof WorkspaceFailedError && /shell/.test(e.message));
  const undeclared = await noShell.open(config, session());
  assert.deepEqual(undeclared.ref.capabilities, { fs: true, shell: false, snapshot: true });
  // a ref advertising a module this provider cannot build does not resolve
  await assert.rejects(noShell.resolve({ ...undeclared.ref, capabilities: { fs: true, shell: true } }), WorkspaceFailedError);
});

test("N±1: resolve accepts no version, v1 (logged as a migration) and v2, and refuses anything else", async () => {
  const { ws, ref } = await provider.open(config, session());
  await ws.fs!.writeFile("/v.txt", "kept");
  const { schemaVersion: _, ...legacy } = ref;
  for (const r of [legacy, { ...ref, schemaVersion: 1 }, { ...ref, schemaVersion: 2 }]) {
    const w = await provider.resolve(r as WorkspaceRef);
    assert.equal(text(await w.fs!.readFile("/v.txt")), "kept");
  }
  assert.ok(logged.some((m) => m === "workspace ref: migrating ref from v1 to v2"), `logged: ${logged}`);
  for (const v of [3, 0, -1, 4, 2.5, "2", null, 1e9]) {
    const err = await provider.resolve({ ...ref, schemaVersion: v as number }).catch((e: unknown) => e);
    assert.ok(err instanceof WorkspaceFailedError, `schemaVersion ${v} resolved`);
    assert.equal(err.transient, false);
    assert.match(err.message, new RegExp(`unsupported schemaVersion ${JSON.stringify(v).replace(/[.]/g, "\\.")}: this build reads v1, v2 or none`));
  }
  await assert.rejects(provider.resolve({ ...ref, providerId: "other" }), /refusing to resolve a ref of provider "other"/);
  await assert.rejects(provider.resolve({ ...ref, ref: {} }), /no workspace_id/);
  await assert.rejects(provider.resolve({ ...ref, ref: null }), /no workspace_id/);
});

test("open refuses a config of another kind; an empty session ID is refused", async () => {
  await assert.rejects(provider.open({ kind: "local" }, session()), WorkspaceFailedError);
  await assert.rejects(provider.open(config, { sessionId: "" }), WorkspaceFailedError);
  for (const workspace of ["..", "a/b", "ws-notanid"]) {
    await assert.rejects(provider.open({ ...config, workspace }, session()), (e: unknown) => e instanceof WorkspaceFailedError && !e.transient);
  }
});

test("a named workspace is shared on purpose; forkFrom forks it for a session", async () => {
  const name = fresh("shared");
  const a = await provider.open({ ...config, workspace: name }, session());
  await a.ws.fs!.writeFile("/base.txt", "base");
  await a.ws.snapshot!.checkpoint("start");
  const b = await provider.open({ ...config, forkFrom: name + "@start" }, session());
  assert.equal(text(await b.ws.fs!.readFile("/base.txt")), "base");
  await b.ws.fs!.writeFile("/base.txt", "changed in the fork");
  assert.equal(text(await a.ws.fs!.readFile("/base.txt")), "base");
});

test("evicted: a module call on a workspace gone from the server is WorkspaceEvictedError; a missing file is not", async () => {
  const s = session();
  const { ws, ref } = await provider.open(config, s);
  await ws.fs!.writeFile("/x.txt", "x");
  await assert.rejects(ws.fs!.readFile("/missing.txt"), NotFound);
  await client.workspace(ws.id).delete();
  const err = await ws.fs!.readFile("/x.txt").catch((e: unknown) => e);
  assert.ok(err instanceof WorkspaceEvictedError, String(err));
  assert.equal(err.workspaceName, ws.id);
  // resolve of a ref whose workspace is gone: a permanent failure
  const gone = await provider.resolve(ref).catch((e: unknown) => e);
  assert.ok(gone instanceof WorkspaceFailedError);
  assert.equal(gone.transient, false);
});

test("transient failures are marked so and retried; permanent ones are not", async () => {
  const down = new ForkspaceWorkspaceProvider({ url: "http://127.0.0.1:1" });
  const err = await down.open(config, session()).catch((e: unknown) => e);
  assert.ok(err instanceof WorkspaceFailedError);
  assert.equal(err.transient, true);

  // A network that fails the first two requests, then reaches the server.
  let blips = 2;
  const flaky: typeof fetch = (input, init) => (blips-- > 0 ? Promise.reject(new TypeError("fetch failed")) : fetch(input, init));
  const p = new ForkspaceWorkspaceProvider({ client: new Client({ url: server.url, token: "", fetch: flaky }) });
  let calls = 0;
  const opened = await retryTransient(() => (calls++, p.open(config, session())), { attempts: 3, baseMs: 1 });
  assert.equal(calls, 3);
  assert.ok(opened.ws.fs);

  calls = 0;
  await assert.rejects(retryTransient(() => (calls++, p.open({ kind: "nope" }, session())), { attempts: 3, baseMs: 1 }), WorkspaceFailedError);
  assert.equal(calls, 1);
  calls = 0;
  await assert.rejects(retryTransient(() => (calls++, down.open(config, session())), { attempts: 2, baseMs: 1 }), WorkspaceFailedError);
  assert.equal(calls, 3);
});

test("the seed's fs surface, shell and snapshot modules", async () => {
  const { ws, ref } = await provider.open(config, session());
  const fs = ws.fs!;
  await fs.writeFile("/src/a.ts", "export const a = 1;\n// TODO: b\n");
  await fs.writeFile("/src/deep/b.ts", new TextEncoder().encode("// todo later\n"));
  await fs.mkdir("/empty");
  assert.deepEqual(await fs.stat("/src/a.ts"), { path: "/src/a.ts", type: "file", size: 31, mtime: (await fs.stat("/src/a.ts")).mtime });
  assert.equal((await fs.stat("/src")).type, "dir");
  assert.deepEqual((await fs.ls("/src")).map((e) => [e.name, e.path, e.type]), [
    ["a.ts", "/src/a.ts", "file"],
    ["deep", "/src/deep", "dir"],
  ]);
  assert.deepEqual(await fs.glob("**/*.ts"), ["/src/a.ts", "/src/deep/b.ts"]);
  assert.deepEqual(await fs.grep("todo", { ignoreCase: true }), [
    { path: "/src/a.ts", lineNumber: 2, line: "// TODO: b" },
    { path: "/src/deep/b.ts", lineNumber: 1, line: "// todo later" },
  ]);
  assert.deepEqual(await fs.grep("todo", { path: "/src/deep" }), [{ path: "/src/deep/b.ts", lineNumber: 1, line: "// todo later" }]);
  await fs.rm("/src/deep");
  await assert.rejects(fs.stat("/src/deep/b.ts"), NotFound);

  const r = await ws.shell!.exec("cat src/a.ts | wc -l; echo out > made.txt; exit 4");
  assert.equal(r.exitCode, 4);
  assert.equal(r.stdout.trim(), "2");
  assert.equal(text(await fs.readFile("/made.txt")), "out\n");

  const snap = ws.snapshot!;
  const cp = await snap.checkpoint("before");
  await fs.writeFile("/src/a.ts", "changed\n");
  assert.deepEqual(await snap.diff("before"), [{ op: "modified", path: "src/a.ts" }]);
  assert.deepEqual((await snap.list()).map((c) => c.label), ["before"]);
  await snap.restore(cp.id);
  assert.equal(text(await fs.readFile("/src/a.ts")), "export const a = 1;\n// TODO: b\n");
  const forkRef = await snap.fork(fresh("fork"));
  assert.equal(forkRef.schemaVersion, 2);
  assert.deepEqual(forkRef.capabilities, ref.capabilities);
  const fork = await provider.resolve(forkRef);
  assert.equal(text(await fork.fs!.readFile("/made.txt")), "out\n");
});

test("ephemeral workspaces are deleted at close", async () => {
  const { ws, ref } = await provider.open({ ...config, ephemeral: true }, session());
  await ws.fs!.writeFile("/tmp.txt", "t");
  await ws.close();
  await assert.rejects(client.workspace(ws.id).info(), NotFound);
  await assert.rejects(provider.resolve(ref), WorkspaceFailedError);
});

test("session workspace names match the Go local provider's mapping", async () => {
  assert.equal(await sessionWorkspace("abc-1"), "session-abc-1");
  const odd = "user@example.com/run 7";
  const want = "session_" + createHash("sha256").update(odd).digest("hex").slice(0, 32);
  assert.equal(await sessionWorkspace(odd), want);
  const long = "x".repeat(60); // "session-" + 60 characters is past the 64 a name may have
  assert.equal(await sessionWorkspace(long), "session_" + createHash("sha256").update(long).digest("hex").slice(0, 32));
  await assert.rejects(sessionWorkspace(""), WorkspaceFailedError);
});

test("refs in the Go provider package's JSON: read, resolved by a provider of the same ID, and written back", async () => {
  // What provider/localprovider writes for a workspace (provider.Ref's JSON).
  const local = new ForkspaceWorkspaceProvider({ client, providerId: "local" });
  const w = await client.createWorkspace(fresh("go"));
  await w.write("from-go.txt", "hi");
  const id = (await w.info()).id;
  const goJSON = `{"provider_id":"local","ref":{"workspace_id":"${id}"},"capabilities":{"fs":true,"snapshot":true},"schema_version":1}`;
  const ref = decodeRef(goJSON);
  assert.deepEqual(ref, { providerId: "local", ref: { workspace_id: id }, capabilities: { fs: true, snapshot: true }, schemaVersion: 1 });
  const ws = await local.resolve(ref);
  assert.equal(text(await ws.fs!.readFile("/from-go.txt")), "hi");
  assert.equal(ws.shell, undefined);
  assert.equal(toGoJSON(ref), goJSON);
  // the seed's spelling, and Go's "schemaVersion" alias
  assert.deepEqual(decodeRef(JSON.stringify({ ...ref })), ref);
  assert.equal(decodeRef(`{"provider_id":"local","ref":null,"capabilities":{},"schemaVersion":2}`).schemaVersion, 2);
  // strict, as Go's decoder is
  for (const bad of [
    `{"provider_id":"local","ref":{},"capabilities":{},"extra":1}`,
    `{"provider_id":"local","providerId":"other","ref":{},"capabilities":{}}`,
    `{"provider_id":"local","ref":{},"capabilities":{},"schema_version":1,"schemaVersion":2}`,
    `{"ref":{},"capabilities":{}}`,
    `[]`,
    `not json`,
  ]) {
    assert.throws(() => decodeRef(bad), WorkspaceFailedError, bad);
  }
  // a future version decodes but does not resolve
  await assert.rejects(local.resolve(decodeRef(goJSON.replace('"schema_version":1', '"schema_version":3'))), /unsupported schemaVersion 3/);
});
