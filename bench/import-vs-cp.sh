#!/usr/bin/env bash
# Times `forkspace import` of a host tree against `cp -a` of the same
# tree, and `forkspace export` (to a tar file) against `tar -cf` of it, in
# one run, and prints the ratios (issue 9, goal 2: ≤ 1.5×).
#
#   bash bench/import-vs-cp.sh [TREE]     # default: $(go env GOROOT)/src
#   bash bench/import-vs-cp.sh gen:N      # a generated tree of N files (bench/gentree)
#
# Every contender is a fresh process, median of three runs. Before each
# timed run, `sync` empties the page cache's dirty pages so no run pays
# for the previous one's writes; the source tree is read once first, so
# all read it warm. import and cp both end durable: cp -a is followed by
# `sync -f` of its target (cp alone does not wait for the disk), and
# import returns only after its one durability barrier; export and tar
# -cf write an archive without syncing it. Peak RSS of the
# import is printed from /usr/bin/time when available.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/forkspace-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

src=${1:-$(go env GOROOT)/src}
if [[ $src == gen:* ]]; then
  n=${src#gen:}
  echo "generating $n files under $work/tree..." >&2
  go run ./bench/gentree "$work/tree" "$n"
  src=$work/tree
fi
echo "building forkspace..." >&2
go build -o "$work/forkspace" ./cmd/forkspace
files=$(find "$src" -type f | wc -l)
echo "tree: $src ($files files, $(du -sh "$src" | cut -f1))" >&2
tar -cf - -C "$src" . >/dev/null # warm the source

fs="$work/forkspace"
export FORKSPACE_HOME="$work/store"
"$fs" init >/dev/null

source bench/lib.sh

cp_sync() { cp -a "$1" "$2" && sync -f "$2"; }
import_ws() { "$fs" workspace create "imp-$2" >/dev/null && "$fs" import -w "imp-$2" "$1"; }
export_ws() { "$fs" export -w imp-1 "$1"; }

cp_ms=$(median_ms cp_sync "$src" "$work/cp-{}")
import_ms=$(median_ms import_ws "$src" {})
tar_ms=$(median_ms tar -cf "$work/tar-{}.tar" -C "$src" .)
export_ms=$(median_ms export_ws "$work/export-{}.tar")

rss=""
if [[ -x /usr/bin/time ]]; then
  "$fs" workspace create imp-rss >/dev/null
  rss=$( { /usr/bin/time -f '%M' "$fs" import -w imp-rss "$src" >/dev/null; } 2>&1 | tail -1)
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / (b > 0 ? b : 1) }'; }
printf '\n%-32s %10s %10s\n' "operation ($files files)" "median ms" "ratio"
printf '%-32s %10d %10s\n' "cp -a + sync" "$cp_ms" "1.00x"
printf '%-32s %10d %10s\n' "forkspace import" "$import_ms" "$(ratio "$import_ms" "$cp_ms")"
printf '%-32s %10d %10s\n' "tar -cf" "$tar_ms" "1.00x"
printf '%-32s %10d %10s\n' "forkspace export (.tar)" "$export_ms" "$(ratio "$export_ms" "$tar_ms")"
[[ -n $rss ]] && printf 'forkspace import peak RSS: %d MiB\n' "$((rss / 1024))"
printf 'load average: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
