/** Tokens: Bearer only, scoped, and a revoked token refused with a typed error naming the cause. */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client, ForkspaceWorkspaceProvider, NotFound, PermissionDenied, Unauthenticated, WorkspaceFailedError } from "../src/index.js";
import { fresh, startServer, type Server } from "./server.js";

let server: Server & { adminToken: string };
let admin: Client;

before(async () => {
  server = await startServer({ tokens: true });
  admin = new Client({ url: server.url, token: server.adminToken });
});
after(() => server?.stop());

test("a call without a token says the server needs one", async () => {
  const err = await new Client({ url: server.url, token: "" }).workspace("x").info().catch((e: unknown) => e);
  assert.ok(err instanceof Unauthenticated);
  assert.equal(err.status, 401);
  assert.match(err.message, /needs a token and this client has none/);
});

test("a revoked token is Unauthenticated naming the cause, for the client and the provider", async () => {
  const name = fresh("tok");
  await admin.createWorkspace(name);
  const minted = await admin.createToken({ workspaces: name, perms: ["read", "write"], label: "agent" });
  assert.match(minted.token ?? "", /^fks_/);
  const agent = new Client({ url: server.url, token: minted.token });
  await agent.workspace(name).write("a.txt", "ok");
  assert.equal(await agent.workspace(name).readText("a.txt"), "ok");
  // scoped: another workspace is hidden, exec is not allowed
  await assert.rejects(agent.workspace(fresh("other")).info(), NotFound);
  await assert.rejects(agent.workspace(name).exec("true"), PermissionDenied);

  await admin.revokeToken(minted.id);
  const err = await agent.workspace(name).readText("a.txt").catch((e: unknown) => e);
  assert.ok(err instanceof Unauthenticated, String(err));
  assert.equal(err.code, "unauthenticated");
  assert.equal(err.status, 401);
  assert.match(err.message, /refused this client's token/);
  assert.match(err.message, /revoked/);
  // nothing was written with it
  await assert.rejects(agent.workspace(name).write("b.txt", "no"), Unauthenticated);
  assert.equal(await admin.workspace(name).exists("b.txt"), false);

  const p = new ForkspaceWorkspaceProvider({ client: agent });
  const failed = await p.open({ kind: "forkspace", workspace: name }, { sessionId: "s1" }).catch((e: unknown) => e);
  assert.ok(failed instanceof WorkspaceFailedError);
  assert.equal(failed.transient, false, "an auth failure is permanent: retries cannot fix it");
  assert.ok(failed.cause instanceof Unauthenticated);
  assert.match(failed.message, /revoked/);
  assert.ok((await admin.tokens()).some((t) => t.id === minted.id && t.state === "revoked"));
});
