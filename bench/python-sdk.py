#!/usr/bin/env python3
"""Python SDK call latency against raw HTTP (issue 13's benchmark).

Usage: python3 bench/python-sdk.py URL [CALLS]
with clients/python importable (pip install ./clients/python, or
PYTHONPATH=clients/python) and `forkspace serve` listening at URL.

Times CALLS small calls each way over one kept-alive connection, side by
side: Workspace.stat / read_bytes / write through the SDK, and the same
requests made with http.client directly. Prints p50/p99 per call and the
SDK/raw ratio.
"""

import http.client
import statistics
import sys
import time
import urllib.parse
import uuid

import forkspace


def timed(fn, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    out.sort()
    return out[len(out) // 2], out[int(len(out) * 0.99) - 1]


def main():
    url = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    c = forkspace.Client(url)
    name = "bench-" + uuid.uuid4().hex[:8]
    ws = c.create_workspace(name)
    ws.write("small.txt", b"x" * 1024)
    u = urllib.parse.urlsplit(url)
    raw = http.client.HTTPConnection(u.hostname, u.port)
    hdr = {"X-Forkspace-Actor": "bench"}
    if c.token:
        hdr["Authorization"] = "Bearer " + c.token

    def raw_call(method, path, body=None):
        raw.request(method, path, body=body, headers=hdr)
        r = raw.getresponse()
        r.read()
        assert r.status < 300, r.status

    base = f"/v1/workspaces/{name}"
    cases = [
        ("stat", lambda: ws.stat("small.txt"), lambda: raw_call("GET", base + "/stat/small.txt")),
        ("read 1 KiB", lambda: ws.read_bytes("small.txt"), lambda: raw_call("GET", base + "/files/small.txt")),
        ("write 1 KiB", lambda: ws.write("w.txt", b"y" * 1024), lambda: raw_call("PUT", base + "/files/w.txt", b"y" * 1024)),
    ]
    print(f"{n} calls each, one connection, {url}")
    print(f"{'call':12} {'SDK p50':>9} {'raw p50':>9} {'ratio':>6} {'SDK p99':>9} {'raw p99':>9}")
    for label, sdk, rawfn in cases:
        timed(sdk, 50), timed(rawfn, 50)  # warm up
        s50, s99 = timed(sdk, n)
        r50, r99 = timed(rawfn, n)
        print(f"{label:12} {s50*1e3:8.3f}ms {r50*1e3:8.3f}ms {s50/r50:6.2f} {s99*1e3:8.3f}ms {r99*1e3:8.3f}ms")
    ws.delete()


if __name__ == "__main__":
    main()
