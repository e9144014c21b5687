#!/usr/bin/env bash
# Everyday workloads on a `forkspace fuse mount`, on the host file system
# (ext4 on this machine) and on go-fuse's loopback example over it (its
# userspace data path), side by side in one run; prints seconds (MB/s for
# fio) per target and the ratio to the host file system:
#
#   git clone   of a local 5,000-file repository, then git status (twice)
#   untar       of a 20,000-file node_modules-shaped tree
#   fio         sequential write (with a final fsync) and read of 1 GiB
#   go build    of this module's command, dependencies already compiled
#
#   bash bench/fuse-vs-ext4.sh [ROUNDS]
#
# ROUNDS (default 3) runs each workload that many times per target and
# reports the median. Needs /dev/fuse, fusermount3 (fuse3), git, fio, go
# and root (to drop the page cache before reads).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
work=$(mktemp -d "${TMPDIR:-/var/tmp}/forkspace-fusebench.XXXXXX")
pids=()
cleanup() {
	for m in "$work"/mnt-*; do fusermount3 -u -z "$m" 2>/dev/null || true; done
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

echo "# building and generating inputs in $work" >&2
go build -o "$work/forkspace" ./cmd/forkspace
go build -o "$work/loopback" github.com/hanwen/go-fuse/v2/example/loopback
export FORKSPACE_HOME="$work/store"
fs="$work/forkspace"
"$fs" init >/dev/null
"$fs" workspace create bench >/dev/null

# A 5,000-file repository of 8-12 KiB files, 100 to a directory.
go run ./bench/gentree "$work/repo" 5000
git -C "$work/repo" init -q
git -C "$work/repo" add -A
git -C "$work/repo" -c user.name=bench -c user.email=bench@example.com commit -q -m tree

# node_modules: 1,000 packages of 20 files (package.json, README, lib/*.js
# of 200 B to 6 KiB) in nested directories.
python3 - "$work/nm" <<'EOF'
import os, random, sys
root = os.path.join(sys.argv[1], "node_modules")
rng = random.Random(1)
for p in range(1000):
    pkg = os.path.join(root, f"pkg-{p:04d}")
    os.makedirs(os.path.join(pkg, "lib", "util"), exist_ok=True)
    files = ["package.json", "README.md"] + [f"lib/m{i}.js" for i in range(12)] + [f"lib/util/u{i}.js" for i in range(6)]
    for f in files:
        with open(os.path.join(pkg, f), "wb") as out:
            out.write(os.urandom(rng.randint(100, 3000)).hex().encode())
EOF
tar -C "$work/nm" -cf "$work/nm.tar" node_modules
rm -rf "$work/nm"

# This module's source; the build cache (go env GOCACHE) is warmed with its
# dependencies first, so each timed build compiles this module's packages
# (their directory differs per target) and reads the rest from the cache.
git ls-files -z | tar --null -T - -cf "$work/src.tar"
mkdir -p "$work/src-warm"
tar -C "$work/src-warm" -xf "$work/src.tar"
(cd "$work/src-warm" && go build -o /dev/null ./cmd/forkspace)

# Targets: the host directory, a forkspace mount, a go-fuse loopback.
mkdir -p "$work/ext4" "$work/mnt-forkspace" "$work/mnt-loopback" "$work/loop-under"
"$fs" fuse mount bench "$work/mnt-forkspace" 2>"$work/mount.log" &
pids+=($!)
"$work/loopback" "$work/mnt-loopback" "$work/loop-under" 2>"$work/loopback.log" &
pids+=($!)
for m in mnt-forkspace mnt-loopback; do
	for _ in $(seq 100); do mountpoint -q "$work/$m" && break; sleep 0.1; done
	mountpoint -q "$work/$m" || { echo "mount $m failed" >&2; cat "$work"/*.log >&2; exit 1; }
done
targets=(ext4 mnt-forkspace mnt-loopback)

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
dropcaches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A result
measure() { # measure NAME TARGET COMMAND...: seconds of COMMAND, median of $rounds
	local name=$1 t=$2
	shift 2
	local times=()
	for r in $(seq "$rounds"); do
		local d="$work/$t/$name-$r"
		rm -rf "$d"
		mkdir -p "$d"
		dropcaches
		local s
		s=$(now)
		(cd "$d" && "$@") >"$work/out.log" 2>&1 || { echo "$name on $t failed:" >&2; tail -5 "$work/out.log" >&2; exit 1; }
		times+=("$(since "$s")")
	done
	result[$name,$t]=$(printf '%s\n' "${times[@]}" | median)
}

gitclone() { git clone -q "file://$work/repo" clone; }
untar() { tar -xf "$work/nm.tar"; }
gobuild() { tar -xf "$work/src.tar" && go build -o /dev/null ./cmd/forkspace; }

for t in "${targets[@]}"; do
	echo "# $t" >&2
	measure git-clone "$t" gitclone
	measure untar "$t" untar
	measure go-build "$t" gobuild
	# git status alone: clone, drop the cache, then time two status calls.
	st=()
	for r in $(seq "$rounds"); do
		d="$work/$t/status-$r"
		rm -rf "$d"
		mkdir -p "$d"
		(cd "$d" && git clone -q "file://$work/repo" clone)
		dropcaches
		s=$(now)
		git -C "$d/clone" status --porcelain >/dev/null
		git -C "$d/clone" status --porcelain >/dev/null
		st+=("$(since "$s")")
	done
	result[git-status,$t]=$(printf '%s\n' "${st[@]}" | median)
	# fio: MB/s of a 1 GiB sequential write ending in fsync, then of a
	# cold sequential read of the same file.
	wr=()
	rd=()
	for r in $(seq "$rounds"); do
		d="$work/$t/fio-$r"
		rm -rf "$d"
		mkdir -p "$d"
		dropcaches
		(cd "$d" && fio --name=w --rw=write --bs=1M --size=1G --end_fsync=1 --filename=f --output-format=json >"$work/fio-w.json")
		dropcaches
		(cd "$d" && fio --name=r --rw=read --bs=1M --size=1G --filename=f --output-format=json >"$work/fio-r.json")
		wr+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["write"]["bw"]/1024)' "$work/fio-w.json")")
		rd+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["bw"]/1024)' "$work/fio-r.json")")
		rm -rf "$d"
	done
	result[fio-write-MBps,$t]=$(printf '%s\n' "${wr[@]}" | median)
	result[fio-read-MBps,$t]=$(printf '%s\n' "${rd[@]}" | median)
	rm -rf "${work:?}/$t/"*
done

printf '%-16s %12s %12s %12s %14s %14s\n' workload ext4 forkspace loopback forkspace/ext4 loopback/ext4
for w in git-clone git-status untar go-build fio-write-MBps fio-read-MBps; do
	e=${result[$w,ext4]} f=${result[$w,mnt-forkspace]} l=${result[$w,mnt-loopback]}
	printf '%-16s %12.2f %12.2f %12.2f %14.2f %14.2f\n' "$w" "$e" "$f" "$l" "$(echo "$f / $e" | bc -l)" "$(echo "$l / $e" | bc -l)"
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg); rounds: $rounds (medians)"
