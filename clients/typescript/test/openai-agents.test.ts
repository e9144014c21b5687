/**
 * ForkspaceSandboxClient through the OpenAI Agents SDK's own sandbox
 * capability (@openai/agents/sandbox, a devDependency) against a real server.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Manifest, type SandboxClient, type SandboxSession } from "@openai/agents/sandbox";
import { Client } from "../src/index.js";
import { ForkspaceSandboxClient, ForkspaceSandboxSession } from "../src/openai-agents.js";
import { fresh, startServer, type Server } from "./server.js";

// @openai/agents-core 0.20 is written for Node.js 20 or later.
const skip = Number(process.versions.node.split(".")[0]) < 20 ? `@openai/agents needs Node.js >= 20 (this is ${process.versions.node})` : false;

let server: Server;
let client: Client;

before(async () => {
  server = await startServer();
  client = new Client({ url: server.url, token: "" });
});
after(() => server?.stop());

// The published interfaces, checked at compile time.
const conforms = (c: ForkspaceSandboxClient<Manifest>): SandboxClient => c;
const sessionConforms = (s: ForkspaceSandboxSession<Manifest>): SandboxSession => s;

test("the SDK's shell capability runs commands in a forkspace workspace made from a manifest", { skip }, async () => {
  const sandbox = new ForkspaceSandboxClient<Manifest>({ client });
  conforms(sandbox);
  const name = fresh("oai");
  const session = await sandbox.create({
    manifest: new Manifest({
      root: "/workspace",
      entries: {
        "README.md": { type: "file", content: "# hello\n" },
        src: { type: "dir", children: { "main.sh": { type: "file", content: "echo from main\n" } } },
      },
    }),
    options: { workspace: name },
  });
  assert.equal(session.state.workspaceReady, true);
  assert.equal(await client.workspace(name).readText("src/main.sh"), "echo from main\n");

  const { shell } = await import("@openai/agents/sandbox");
  const cap = shell().bind(sessionConforms(session));
  const tools = cap.tools() as unknown as Array<{ name: string; invoke(ctx: unknown, input: string): Promise<unknown> }>;
  const exec = tools.find((t) => t.name === "exec_command");
  assert.ok(exec, `tools: ${tools.map((t) => t.name)}`);
  const { RunContext } = await import("@openai/agents");
  const out = String(await exec.invoke(new RunContext(), JSON.stringify({ cmd: "sh main.sh; echo made > made.txt", workdir: "src" })));
  assert.match(out, /Process exited with code 0/);
  assert.match(out, /from main/);
  assert.equal(await client.workspace(name).readText("src/made.txt"), "made\n");

  assert.deepEqual((await session.listDir({ path: "/workspace" })).map((e) => [e.name, e.path, e.type]), [
    ["README.md", "/workspace/README.md", "file"],
    ["src", "/workspace/src", "dir"],
  ]);
  assert.equal(new TextDecoder().decode(await session.readFile({ path: "/workspace/README.md" })), "# hello\n");
  assert.equal(await session.pathExists("src/made.txt"), true);
  assert.equal(await session.directoryExists("/workspace/src"), true);
  assert.equal(await session.directoryExists("/workspace/README.md"), false);
  assert.throws(() => session.rel("/etc/passwd"), /outside the workspace root/);
  assert.throws(() => session.rel("src/../../x"), /".." segment/);
  await assert.rejects(session.materializeEntry({ path: "repo", entry: { type: "git_repo" } }), /type "git_repo" is not supported/);

  const r = await session.exec({ cmd: "echo err >&2; exit 5" });
  assert.equal(r.exitCode, 5);
  assert.equal(r.stderr, "err\n");

  // persist and hydrate round trip through a tar archive
  const tar = await session.persistWorkspace();
  const other = await sandbox.create({ options: { workspace: name + "-copy" } });
  await other.hydrateWorkspace(tar);
  assert.equal(await client.workspace(name + "-copy").readText("src/made.txt"), "made\n");

  // serialize, close, resume: the same workspace, no secret in the state
  const saved = await sandbox.serializeSessionState(session.state);
  assert.deepEqual(Object.keys(saved).sort(), ["root", "workspaceId", "workspaceName"]);
  await session.close();
  await assert.rejects(session.readFile({ path: "README.md" }), /closed/);
  const resumed = await sandbox.resume(await sandbox.deserializeSessionState(JSON.parse(JSON.stringify(saved))));
  assert.equal(new TextDecoder().decode(await resumed.readFile({ path: "README.md" })), "# hello\n");
  await assert.rejects(sandbox.deserializeSessionState({}), /no workspaceId/);
  await sandbox.delete(resumed.state);
  await assert.rejects(client.workspace(name).info());
  await other.delete();
});
