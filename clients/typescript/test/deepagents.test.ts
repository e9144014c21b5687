/**
 * ForkspaceBackend through deepagents' own filesystem tools (the published
 * package, a devDependency) against a real server.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { SandboxBackendProtocolV2 } from "deepagents";
import { Client, type Workspace } from "../src/index.js";
import { ForkspaceBackend } from "../src/deepagents.js";
import { fresh, startServer, type Server } from "./server.js";

// deepagents' dependencies (langchain 1.x) need Node.js 20 or later.
const nodeMajor = Number(process.versions.node.split(".")[0]);
const skip = nodeMajor < 20 ? `deepagents needs Node.js >= 20 (this is ${process.versions.node})` : false;

let server: Server;
let client: Client;

before(async () => {
  server = await startServer();
  client = new Client({ url: server.url, token: "" });
});
after(() => server?.stop());

// The published protocol, checked at compile time.
const conforms = (ws: Workspace): SandboxBackendProtocolV2 => new ForkspaceBackend(ws);

interface Tool {
  name: string;
  invoke(input: Record<string, unknown>): Promise<unknown>;
}

async function toolsFor(backend: SandboxBackendProtocolV2): Promise<Record<string, Tool>> {
  const { createFilesystemMiddleware } = await import("deepagents");
  const mw = createFilesystemMiddleware({ backend });
  return Object.fromEntries((mw.tools as unknown as Tool[]).map((t) => [t.name, t]));
}

/** A tool's answer as text (a string, a ToolMessage, or content blocks). */
function textOf(r: unknown): string {
  if (typeof r === "string") return r;
  const c = (r as { content?: unknown }).content ?? r;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((b) => (b as { text?: string }).text ?? "").join("");
  return JSON.stringify(c);
}

test("deepagents' file tools and execute work on a forkspace workspace", { skip }, async () => {
  const ws = await client.createWorkspace(fresh("deep"));
  const backend = conforms(ws);
  const { isSandboxBackend } = await import("deepagents");
  assert.ok(isSandboxBackend(backend));
  const tools = await toolsFor(backend);

  assert.match(textOf(await tools.write_file.invoke({ file_path: "/src/app.py", content: "def main():\n    return 1\n# TODO tidy\n" })), /Successfully wrote/);
  assert.equal(await ws.readText("src/app.py"), "def main():\n    return 1\n# TODO tidy\n");
  assert.match(textOf(await tools.read_file.invoke({ file_path: "/src/app.py" })), /return 1/);
  assert.match(textOf(await tools.read_file.invoke({ file_path: "/src/app.py", offset: 1, limit: 1 })), /lines 2-2[\s\S]*return 1/);
  assert.match(textOf(await tools.edit_file.invoke({ file_path: "/src/app.py", old_string: "return 1", new_string: "return 2" })), /Successfully replaced 1/);
  assert.equal(await ws.readText("src/app.py"), "def main():\n    return 2\n# TODO tidy\n");
  assert.match(textOf(await tools.edit_file.invoke({ file_path: "/src/app.py", old_string: "absent", new_string: "x" })), /String not found/);
  assert.match(textOf(await tools.ls.invoke({ path: "/" })), /\/src\//);
  assert.match(textOf(await tools.glob.invoke({ pattern: "**/*.py" })), /\/src\/app\.py/);
  assert.match(textOf(await tools.grep.invoke({ pattern: "TODO" })), /\/src\/app\.py/);
  assert.match(textOf(await tools.grep.invoke({ pattern: "(", output_mode: "content" })), /def main\(\)/); // literal, not a regular expression
  assert.match(textOf(await tools.execute.invoke({ command: "python3 -c 'print(6*7)' 2>/dev/null || echo 42; echo made > src/out.txt" })), /42/);
  assert.equal(await ws.readText("src/out.txt"), "made\n");
  assert.match(textOf(await tools.read_file.invoke({ file_path: "/missing.txt" })), /not found/i);
  await tools.delete.invoke({ file_path: "/src" });
  assert.equal(await ws.exists("src"), false);
  await ws.delete();
});

test("the protocol's methods directly: pagination, binary files, uploads and downloads", { skip }, async () => {
  const ws = await client.createWorkspace(fresh("deep"));
  const b = new ForkspaceBackend(ws);
  await b.write("/t.txt", "a\nb\nc\n");
  assert.deepEqual(await b.read("/t.txt", 1, 1), { content: "b", mimeType: "text/plain", totalLines: 3, startLine: 2, endLine: 2, nextOffset: 2 });
  assert.deepEqual(await b.read("/t.txt", 2, 10), { content: "c", mimeType: "text/plain", totalLines: 3, startLine: 3, endLine: 3 });
  assert.match((await b.read("/t.txt", 5)).error ?? "", /exceeds file length \(3 lines\)/);
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255]);
  assert.deepEqual(await b.uploadFiles([["/img/x.png", png], ["/img", png]]), [
    { path: "/img/x.png", error: null },
    { path: "/img", error: "is_directory" },
  ]);
  const r = await b.read("/img/x.png");
  assert.equal(r.mimeType, "image/png");
  assert.deepEqual(r.content, png);
  const raw = await b.readRaw("/t.txt");
  assert.equal(raw.data?.content, "a\nb\nc\n");
  assert.deepEqual(await b.downloadFiles(["/img/x.png", "/nope"]), [
    { path: "/img/x.png", content: png, error: null },
    { path: "/nope", content: null, error: "file_not_found" },
  ]);
  assert.deepEqual((await b.ls("/")).files?.map((f) => [f.path, f.is_dir]), [
    ["/img/", true],
    ["/t.txt", false],
  ]);
  assert.deepEqual((await b.glob("*.png", "/img")).files, [{ path: "/img/x.png", is_dir: false }]);
  const g = await b.grep("b", "/", "*.txt", 5);
  assert.deepEqual(g, { matches: [{ path: "/t.txt", line: 2, text: "b" }] });
  assert.equal(b.id, ws.name);
  await ws.delete();
  assert.match((await b.ls("/")).error ?? "", /not found/);
});

test("an edit never overwrites a change made meanwhile through another door", { skip }, async () => {
  const name = fresh("deep");
  const other = await client.createWorkspace(name);
  await other.write("f.txt", "one two\n");
  // A network hook: just before the edit's upload, another writer changes the file.
  const racing: typeof fetch = async (input, init) => {
    if (init?.method === "PUT" && String(input).includes("/files/f.txt?")) await other.write("f.txt", "changed elsewhere\n");
    return fetch(input, init);
  };
  const b = new ForkspaceBackend(new Client({ url: server.url, token: "", fetch: racing }).workspace(name));
  const r = await b.edit("/f.txt", "one", "1");
  assert.match(r.error ?? "", /changed while it was being edited; read it again/);
  assert.equal(await other.readText("f.txt"), "changed elsewhere\n");
  await other.delete();
});
