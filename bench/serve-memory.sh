#!/usr/bin/env bash
# Memory of an idle `forkspace serve` against the size of its store: for
# each size (default 1,000 and 100,000 files of ~10 KiB, imported into one
# workspace), the server is started, asked for its health and the
# workspace list, left idle for 10 s, and its resident set (peak, heap,
# file-backed) read from /proc. An idle server's memory should not grow
# with the store (issue 9, goal 5).
#
#   bash bench/serve-memory.sh [FILES…]
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1000 100000)
work=$(mktemp -d "${TMPDIR:-/tmp}/forkspace-servemem.XXXXXX")
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/forkspace" ./cmd/forkspace
fs="$work/forkspace"
port=$((20000 + RANDOM % 20000))
for files in "${sizes[@]}"; do
	store="$work/store-$files"
	go run ./bench/gentree "$work/tree" "$files"
	"$fs" --store "$store" init >/dev/null
	"$fs" --store "$store" workspace create big >/dev/null
	"$fs" --store "$store" import -w big "$work/tree" >/dev/null
	rm -rf "$work/tree"
	"$fs" --store "$store" serve --addr "127.0.0.1:$port" 2>"$work/serve.log" &
	pid=$!
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
	curl -sf "http://127.0.0.1:$port/v1/workspaces" >/dev/null
	sleep 10
	awk -v n="$files" 'BEGIN {printf "%8d files, idle serve: ", n} /^VmHWM|^VmRSS|^RssAnon|^RssFile/ {printf "%s %d MiB  ", $1, $2/1024} END {print ""}' "/proc/$pid/status"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	port=$((port + 1))
done
