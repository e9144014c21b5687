#!/usr/bin/env node
// TypeScript SDK call latency against raw fetch (issue 13's benchmark).
//
// Usage: (cd clients/typescript && npm ci && npm run build)
//        node bench/typescript-sdk.mjs URL [CALLS]
// with `forkspace serve` listening at URL ($FORKSPACE_TOKEN is sent if set).
//
// Times CALLS small calls each way, alternating call by call:
// Workspace.stat / readBytes / write / exec through the SDK, and the same
// requests made with the platform's fetch directly (the same keep-alive
// agent). Prints p50/p99 per call and the SDK/raw ratio of the p50s.
import { Client } from "../clients/typescript/dist/index.js";

const url = process.argv[2];
const n = Number(process.argv[3] ?? 2000);
if (!url) {
  console.error("usage: node bench/typescript-sdk.mjs URL [CALLS]");
  process.exit(2);
}
const token = process.env.FORKSPACE_TOKEN ?? "";
const c = new Client({ url, token, actor: "bench" });
const name = "bench-" + Math.random().toString(36).slice(2, 10);
const ws = await c.createWorkspace(name);
const kib = new Uint8Array(1024).fill(120);
await ws.write("small.txt", kib);

const hdr = { "X-Forkspace-Actor": "bench", ...(token ? { Authorization: "Bearer " + token } : {}) };
const base = `${c.url}/v1/workspaces/${name}`;
// what a caller of fetch does: JSON replies parsed, bytes read whole
async function raw(method, path, body) {
  const r = await fetch(base + path, { method, headers: hdr, body });
  if ((r.headers.get("Content-Type") ?? "").includes("json")) await r.json();
  else await r.arrayBuffer();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status}`);
}
async function rawExec(command) {
  const r = await fetch(base + "/exec", { method: "POST", headers: { ...hdr, "Content-Type": "application/json" }, body: JSON.stringify({ command }) });
  const text = await r.text();
  if (!text.includes('"result"')) throw new Error("exec: no result");
}

// Time the SDK call and the raw one alternately, call by call, so that a
// change in the machine's load (it is shared) hits both alike.
async function timedPair(sdk, rawFn, count) {
  const a = [];
  const b = [];
  for (let i = 0; i < count; i++) {
    let t = performance.now();
    await sdk();
    a.push(performance.now() - t);
    t = performance.now();
    await rawFn();
    b.push(performance.now() - t);
  }
  const q = (xs, p) => xs.sort((x, y) => x - y)[Math.max(0, Math.floor(xs.length * p) - (p === 0.5 ? 0 : 1))];
  return { s50: q(a, 0.5), s99: q(a, 0.99), r50: q(b, 0.5), r99: q(b, 0.99) };
}

const cases = [
  ["stat", () => ws.stat("small.txt"), () => raw("GET", "/stat/small.txt"), n],
  ["read 1 KiB", () => ws.readBytes("small.txt"), () => raw("GET", "/files/small.txt"), n],
  ["write 1 KiB", () => ws.write("w.txt", kib), () => raw("PUT", "/files/w.txt?mode=0644", kib), n],
  ["exec true", () => ws.exec("true"), () => rawExec("true"), Math.max(10, Math.floor(n / 20))],
];
console.log(`${n} calls each (exec: fewer), ${url}, node ${process.versions.node}`);
console.log(`${"call".padEnd(12)} ${"SDK p50".padStart(9)} ${"raw p50".padStart(9)} ${"ratio".padStart(6)} ${"SDK p99".padStart(9)} ${"raw p99".padStart(9)}`);
const f = (ms) => `${ms.toFixed(3)}ms`.padStart(9);
for (const [label, sdk, rawFn, count] of cases) {
  await timedPair(sdk, rawFn, Math.min(200, count)); // warm up: the JIT and the server's caches
  const { s50, s99, r50, r99 } = await timedPair(sdk, rawFn, count);
  console.log(`${label.padEnd(12)} ${f(s50)} ${f(r50)} ${(s50 / r50).toFixed(2).padStart(6)} ${f(s99)} ${f(r99)}`);
}
await ws.delete();
