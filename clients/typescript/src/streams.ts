/** Small stream and encoding helpers over web-standard APIs only. */

/** Decode standard base64 into bytes. */
export function fromBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Encode bytes as standard base64. */
export function toBase64(b: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(bin);
}

/**
 * The lines of a UTF-8 byte stream, without their line ends ("\n", "\r\n"
 * or, as Server-Sent Events allow, "\r"). A last line without an end is
 * yielded too. Leaving the loop cancels the stream.
 */
export async function* readLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  let cr = false; // the previous chunk ended with "\r": a "\n" first in this one is part of it
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      if (cr && buf.startsWith("\n")) buf = buf.slice(1);
      cr = false;
      let start = 0;
      for (let i = 0; i < buf.length; i++) {
        const ch = buf[i];
        if (ch !== "\n" && ch !== "\r") continue;
        yield buf.slice(start, i);
        if (ch === "\r") {
          if (i + 1 < buf.length) {
            if (buf[i + 1] === "\n") i++;
          } else {
            cr = true;
          }
        }
        start = i + 1;
      }
      buf = buf.slice(start);
    }
    buf += dec.decode();
    if (buf !== "") yield buf;
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
