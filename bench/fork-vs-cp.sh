#!/usr/bin/env bash
# Times forking a workspace of N files (default 100,000 files of ~10 KiB,
# ~1 GiB) against copying the same tree with `cp -a` and
# `cp --reflink=auto`, in one run, and prints the ratios.
#
#   bash bench/fork-vs-cp.sh [FILES]
#
# Each contender runs as a process from a cold start (the fork includes
# opening the store), three times; the median is reported.
set -euo pipefail
cd "$(dirname "$0")/.."

files=${1:-100000}
work=$(mktemp -d "${TMPDIR:-/tmp}/forkspace-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "building forkspace..." >&2
go build -o "$work/forkspace" ./cmd/forkspace

echo "generating $files files under $work/tree..." >&2
go run ./bench/gentree "$work/tree" "$files"
du -sh "$work/tree" >&2

export FORKSPACE_HOME="$work/store"
fs="$work/forkspace"
"$fs" init >/dev/null
"$fs" workspace create base >/dev/null
echo "importing into a workspace (not timed)..." >&2
"$fs" import -w base "$work/tree" >/dev/null

source bench/lib.sh

fork_ms=$(median_ms "$fs" workspace fork base copy-{})
cp_ms=$(median_ms cp -a "$work/tree" "$work/cp-{}")
reflink_ms=$(median_ms cp -a --reflink=auto "$work/tree" "$work/reflink-{}")

printf '\n%-28s %10s %12s\n' "operation ($files files)" "median ms" "vs fork"
printf '%-28s %10d %12s\n' "forkspace workspace fork" "$fork_ms" "1.0x"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / (b > 0 ? b : 1) }'; }
printf '%-28s %10d %12s\n' "cp -a" "$cp_ms" "$(ratio "$cp_ms" "$fork_ms")"
printf '%-28s %10d %12s\n' "cp -a --reflink=auto" "$reflink_ms" "$(ratio "$reflink_ms" "$fork_ms")"
