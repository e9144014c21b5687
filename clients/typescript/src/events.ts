/**
 * The change feed over Server-Sent Events (docs/rest.md, "The change
 * feed"): a `ready` event whose id is the start, then `change` events in
 * sequence order, heartbeat comments, and an `error` event when the feed
 * can no longer continue. A dropped connection is resumed from the last
 * event delivered with `Last-Event-ID`, as a browser's EventSource does.
 */

import type { Client } from "./client.js";
import { ConnectionFailed, ForkspaceError, errorFor } from "./errors.js";
import { readLines } from "./streams.js";

/** One event of the change feed. */
export interface FeedEvent {
  /** The event's id: the sequence number to resume after. */
  id: string;
  /** "ready" (the stream's start; data `{seq, last}`) or "change" (data: an audit entry with `workspace` and `changed`). */
  type: string;
  data: Record<string, unknown>;
}

/** Options of a change-feed subscription. */
export interface EventsOptions {
  /** Start after this event id ("0": from the start of the log; default: now). */
  since?: string;
  /** Only changes touching this workspace path. */
  path?: string;
  /** Also deliver the `ready` event each (re)connection begins with (default false). */
  ready?: boolean;
  /** Reconnect after a dropped connection (default true). */
  reconnect?: boolean;
  /** Consecutive failed reconnections before giving up with ConnectionFailed (default 5). */
  maxReconnects?: number;
  signal?: AbortSignal;
}

/** One raw Server-Sent Event. */
interface RawEvent {
  id: string;
  event: string;
  data: string;
}

/**
 * Parse a text/event-stream body into events (the WHATWG algorithm, less
 * BOM handling); a `retry` field takes effect at once through onRetry.
 */
async function* parseSSE(body: ReadableStream<Uint8Array>, onRetry: (ms: number) => void): AsyncGenerator<RawEvent> {
  let id = "";
  let event = "";
  let data: string[] = [];
  for await (const line of readLines(body)) {
    if (line === "") {
      if (data.length > 0) yield { id, event: event || "message", data: data.join("\n") };
      event = "";
      data = [];
      continue;
    }
    if (line.startsWith(":")) continue; // a comment (heartbeat)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "id":
        if (!value.includes("\0")) id = value;
        break;
      case "event":
        event = value;
        break;
      case "data":
        data.push(value);
        break;
      case "retry":
        if (/^\d+$/.test(value)) onRetry(Number(value));
        break;
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Subscribe to the feed at `route`; see {@link EventsOptions}. */
export async function* feedEvents(client: Client, route: string, opts: EventsOptions): AsyncGenerator<FeedEvent> {
  let last = opts.since ?? "";
  let retryMs = 1000;
  let failures = 0;
  const maxReconnects = opts.maxReconnects ?? 5;
  for (;;) {
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    if (last !== "") headers["Last-Event-ID"] = last;
    let resp: Response;
    try {
      resp = await client.request("GET", route, { headers, query: { path: opts.path }, signal: opts.signal });
    } catch (e) {
      if (!(e instanceof ConnectionFailed) || opts.reconnect === false || ++failures > maxReconnects) throw e;
      await sleep(retryMs, opts.signal);
      continue;
    }
    if (!resp.body) throw new ConnectionFailed(`GET ${route}: no event stream`);
    try {
      for await (const ev of parseSSE(resp.body, (ms) => (retryMs = ms))) {
        if (ev.event === "error") {
          let o: { code?: string; message?: string; path?: string } = {};
          try {
            o = JSON.parse(ev.data);
          } catch {
            o = { message: ev.data };
          }
          throw errorFor(0, o.code ?? "", o.message ?? ev.data, o.path ?? "");
        }
        let data: Record<string, unknown>;
        try {
          const parsed: unknown = JSON.parse(ev.data);
          data = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { data: parsed };
        } catch {
          data = { data: ev.data };
        }
        if (ev.id !== "") last = ev.id;
        failures = 0;
        if (ev.event === "ready" && !opts.ready) continue;
        yield { id: ev.id, type: ev.event, data };
      }
    } catch (e) {
      if (e instanceof ForkspaceError || opts.signal?.aborted) throw e;
      if (e instanceof Error && (e.name === "AbortError" || e.name === "TimeoutError")) throw e;
      // the connection broke mid-stream: reconnect below
    }
    if (opts.reconnect === false) return;
    if (++failures > maxReconnects) throw new ConnectionFailed(`GET ${route}: the event stream kept ending (${maxReconnects} reconnections)`);
    await sleep(retryMs, opts.signal);
  }
}
