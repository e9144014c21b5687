#!/usr/bin/env bash
# Memory of a `forkspace fuse mount` daemon serving a workspace of N files
# (default 100,000 files of ~10 KiB), after a full walk that stats every
# file (`ls -lR`) and after reading every file (`cat`): the daemon's peak
# resident set, its anonymous memory (heap) and its file-backed pages
# (SQLite maps meta.db, where small files live: page cache, shared and
# reclaimable), from /proc.
#
#   bash bench/fuse-memory.sh [FILES]
#
# Needs /dev/fuse and fusermount3 (Debian fuse3).
set -euo pipefail
cd "$(dirname "$0")/.."

files=${1:-100000}
work=$(mktemp -d "${TMPDIR:-/tmp}/forkspace-fusemem.XXXXXX")
mnt="$work/mnt"
mkdir -p "$mnt"
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	fusermount3 -u -z "$mnt" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/forkspace" ./cmd/forkspace
go run ./bench/gentree "$work/tree" "$files"
export FORKSPACE_HOME="$work/store"
fs="$work/forkspace"
"$fs" init >/dev/null
"$fs" workspace create big >/dev/null
"$fs" import -w big "$work/tree" >/dev/null
rm -rf "$work/tree"

"$fs" fuse mount big "$mnt" 2>"$work/mount.log" &
pid=$!
for _ in $(seq 50); do grep -q mounted "$work/mount.log" 2>/dev/null && break; sleep 0.2; done
rss() { awk '/^VmHWM|^RssAnon|^RssFile/ {printf "%s %d MiB  ", $1, $2/1024}' "/proc/$pid/status"; echo; }
echo "mounted:          $(rss)"
start=$(date +%s.%N)
n=$(ls -lR "$mnt" | grep -c '^-')
echo "ls -lR ($n files, $(echo "$(date +%s.%N) - $start" | bc) s): $(rss)"
start=$(date +%s.%N)
find "$mnt" -type f -exec cat {} + >/dev/null
echo "cat every file ($(echo "$(date +%s.%N) - $start" | bc) s): $(rss)"
