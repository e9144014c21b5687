#!/usr/bin/env bash
# Times the S3 and WebDAV doors against the same clients on a plain
# directory, in one run, and prints the ratios:
#
#   rclone sync of a tree of N files (default 10,000 of ~10 KiB) into
#   a bucket of `forkspace serve --s3` and back out, against rclone's local
#   backend copying the same tree between two directories;
#   a 1 GiB object PUT and GET through the S3 door (rclone copyto, one
#   stream), against rclone copying the same file between directories.
#
#   bash bench/doors.sh [FILES]
#
# Needs rclone (Debian package rclone). Each step runs once; the machine
# should be otherwise idle.
set -euo pipefail
cd "$(dirname "$0")/.."

files=${1:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/forkspace-doors.XXXXXX")
trap 'kill "${serve_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

echo "building forkspace..." >&2
go build -o "$work/forkspace" ./cmd/forkspace
echo "generating $files files..." >&2
go run ./bench/gentree "$work/tree" "$files"
head -c 1073741824 /dev/urandom > "$work/big.bin"

export FORKSPACE_HOME="$work/store" FORKSPACE_S3_ACCESS_KEY=AKIDBENCH FORKSPACE_S3_SECRET_KEY=bench-secret
"$work/forkspace" init >/dev/null
"$work/forkspace" workspace create bench >/dev/null
port=$(( 20000 + RANDOM % 20000 ))
"$work/forkspace" serve --addr "127.0.0.1:$((port + 1))" --s3 "127.0.0.1:$port" 2>"$work/serve.log" &
serve_pid=$!
for _ in $(seq 50); do grep -q "serving MCP" "$work/serve.log" && break; sleep 0.2; done

# rclone against the S3 door, configured from the environment; a CA
# bundle meant for the host's AWS tools would make it refuse plain HTTP.
unset AWS_CA_BUNDLE
export RCLONE_CONFIG=/dev/null RCLONE_CONFIG_FS_TYPE=s3 RCLONE_CONFIG_FS_PROVIDER=Other \
  RCLONE_CONFIG_FS_ACCESS_KEY_ID=AKIDBENCH RCLONE_CONFIG_FS_SECRET_ACCESS_KEY=bench-secret \
  RCLONE_CONFIG_FS_ENDPOINT="http://127.0.0.1:$port" RCLONE_CONFIG_FS_FORCE_PATH_STYLE=true RCLONE_CONFIG_FS_REGION=us-east-1

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / (b > 0 ? b : 1) }'; }

s3_in=$(ms rclone sync "$work/tree" fs:bench/tree --transfers 8)
s3_out=$(ms rclone sync fs:bench/tree "$work/back" --transfers 8)
local_in=$(ms rclone sync "$work/tree" "$work/local-in" --transfers 8)
local_out=$(ms rclone sync "$work/local-in" "$work/local-out" --transfers 8)
diff -r "$work/tree" "$work/back" >/dev/null || { echo "tree synced back differs" >&2; exit 1; }
big_put=$(ms rclone copyto "$work/big.bin" fs:bench/big.bin --s3-upload-cutoff 5G)
big_get=$(ms rclone copyto fs:bench/big.bin "$work/big.back")
big_local=$(ms rclone copyto "$work/big.bin" "$work/big.local")
cmp -s "$work/big.bin" "$work/big.back" || { echo "1 GiB object came back different" >&2; exit 1; }

printf '\n%-44s %10s %10s %8s\n' "step" "door ms" "local ms" "ratio"
printf '%-44s %10d %10d %8s\n' "rclone sync $files files in" "$s3_in" "$local_in" "$(ratio "$s3_in" "$local_in")"
printf '%-44s %10d %10d %8s\n' "rclone sync $files files out" "$s3_out" "$local_out" "$(ratio "$s3_out" "$local_out")"
printf '%-44s %10d %10d %8s\n' "1 GiB PUT (one stream)" "$big_put" "$big_local" "$(ratio "$big_put" "$big_local")"
printf '%-44s %10d %10d %8s\n' "1 GiB GET (one stream)" "$big_get" "$big_local" "$(ratio "$big_get" "$big_local")"
