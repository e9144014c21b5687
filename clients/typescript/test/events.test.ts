/** The change feed over Server-Sent Events against a real server. */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client, TooOld, type Workspace } from "../src/index.js";
import { fresh, startServer, type Server } from "./server.js";

let server: Server;
let client: Client;

before(async () => {
  server = await startServer();
  client = new Client({ url: server.url, token: "" });
});
after(() => server?.stop());

async function withWorkspace(fn: (ws: Workspace) => Promise<void>): Promise<void> {
  const ws = await client.createWorkspace(fresh());
  try {
    await fn(ws);
  } finally {
    await ws.delete().catch(() => {});
  }
}

test("the change feed delivers changes and resumes from Last-Event-ID", () =>
  withWorkspace(async (ws) => {
    const ac = new AbortController();
    const it = ws.events({ signal: ac.signal, ready: true })[Symbol.asyncIterator]();
    const ready = await it.next();
    assert.equal(ready.value?.type, "ready");
    await ws.write("one.txt", "1");
    await ws.write("two.txt", "2");
    const first = (await it.next()).value!;
    assert.equal(first.type, "change");
    assert.deepEqual(first.data.changed, ["one.txt"]);
    assert.equal(first.data.workspace, ws.name);
    await it.return(undefined);
    // a new subscription from the first event's id gets exactly the rest
    const rest = ws.events({ since: first.id })[Symbol.asyncIterator]();
    const second = (await rest.next()).value!;
    assert.deepEqual(second.data.changed, ["two.txt"]);
    assert.ok(Number(second.id) > Number(first.id));
    await rest.return(undefined);
    const seen = ws.watch("three.txt", { timeoutMs: 60_000, since: second.id });
    await ws.write("elsewhere.txt", "e");
    await ws.write("three.txt", "3");
    assert.deepEqual((await seen)?.data.changed, ["three.txt"]);
    ac.abort();
  }));

test("a feed start past the newest entry is TooOld", () =>
  withWorkspace(async (ws) => {
    await assert.rejects(ws.events({ since: "999999999" }).next(), TooOld);
  }));

test("a stream cut mid-way is resumed from the last delivered event: nothing lost, nothing twice", () =>
  withWorkspace(async (ws) => {
    // A network that breaks the first event stream right after its first change event.
    const sent: Array<string | null> = [];
    let cut = false;
    const breaking: typeof fetch = async (input, init) => {
      const resp = await fetch(input, init);
      if (!String(input).includes("/events")) return resp;
      sent.push(new Headers(init?.headers).get("Last-Event-ID"));
      if (cut || !resp.body) return resp;
      cut = true;
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      let text = "";
      let passed = 0; // characters of text already passed on
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          const { value, done } = await reader.read();
          if (done) return c.close();
          text += dec.decode(value, { stream: true });
          const m = /event: change\n[^\n]*\n\n/.exec(text);
          const end = m ? m.index + m[0].length : text.length;
          c.enqueue(new TextEncoder().encode(text.slice(passed, end)));
          passed = end;
          if (m) {
            await reader.cancel();
            c.error(new TypeError("terminated: other side closed"));
          }
        },
      });
      return new Response(body, { status: resp.status, headers: resp.headers });
    };
    const c = new Client({ url: server.url, token: "", fetch: breaking });
    const start = await client.audit({ limit: 1 });
    const since = String(start[0]?.seq ?? 0);
    for (const n of [1, 2, 3]) await ws.write(`f${n}.txt`, String(n));
    const got: string[] = [];
    const ids: number[] = [];
    for await (const ev of c.workspace(ws.name).events({ since })) {
      got.push(...((ev.data.changed as string[]) ?? []));
      ids.push(Number(ev.id));
      if (got.length === 3) break;
    }
    assert.deepEqual(got, ["f1.txt", "f2.txt", "f3.txt"]);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
    assert.equal(sent.length, 2, "one reconnection");
    assert.equal(sent[0], since);
    assert.equal(sent[1], String(ids[0]), "the reconnection names the last delivered event");
  }));

test("the store-wide feed names each change's workspace", () =>
  withWorkspace(async (ws) => {
    const ac = new AbortController();
    const it = client.events({ signal: ac.signal, ready: true })[Symbol.asyncIterator]();
    assert.equal((await it.next()).value?.type, "ready");
    await ws.write("all.txt", "a");
    const ev = (await it.next()).value!;
    assert.equal(ev.data.workspace, ws.name);
    ac.abort();
  }));
