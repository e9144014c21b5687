#!/usr/bin/env bash
# Runs the benchmarks behind every goal of issue 9 (engine speed) and
# prints each figure beside its goal, with the limit the same run measured
# where the goal is a ratio (SQLite's own commit rate, dd, ripgrep, cp -a,
# tar); it exits 1 if a goal was not met. About 6 minutes on 2 cores;
# run it alone on the machine, the figures move with its load.
#
#   bash bench/engine.sh           # 1,000 and 100,000 files
#   FULL=1 bash bench/engine.sh    # adds fork and checkpoint at 1,000,000
#                                  # files and the GC plan of a 1M-object
#                                  # store (another ~25 minutes)
#   WORK=DIR bash bench/engine.sh --report   # the table again, from the
#                                  # output a run with WORK=DIR kept
#
# Each figure comes from one of the commands docs/benchmarks.md names; the
# raw benchmark output is kept in $WORK (default: a temporary directory,
# removed at the end unless WORK is set).
set -euo pipefail
cd "$(dirname "$0")/.."

keep=${WORK:-}
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/forkspace-engine.XXXXXX")}
mkdir -p "$work"
[[ -n $keep ]] || trap 'rm -rf "$work"' EXIT
report=
if [[ ${1:-} == --report ]]; then
	[[ -n $keep && -f $work/create.txt ]] || { echo "engine.sh --report: set WORK to the directory of an earlier run" >&2; exit 2; }
	report=1
fi
[[ -n $report ]] || command -v rg >/dev/null || { echo "engine.sh: ripgrep (rg) is needed for the grep goal: apt-get install ripgrep" >&2; exit 2; }

step() { echo "== $*" >&2; }

# bench OUT BINARY ARGS…: runs a benchmark binary in $work, its results
# in $work/OUT.txt and its log in $work/OUT.log (with --report: nothing).
bench() {
	[[ -z $report ]] || return 0
	local out=$1 bin=$2
	shift 2
	step "$out"
	(cd "$work" && "./$bin" -test.run '^$' -test.timeout 60m "$@") >"$work/$out.txt" 2>"$work/$out.log"
}

# metric OUT NAME UNIT: the value in UNIT of benchmark NAME (without its
# -GOMAXPROCS suffix) in $work/OUT.txt.
metric() {
	awk -v name="$2" -v unit="$3" '
		{ n = $1; sub(/-[0-9]+$/, "", n) }
		n == name { for (i = 3; i < NF; i++) if ($(i + 1) == unit) { print $i; exit } }' "$work/$1.txt"
}

# calc EXPR: awk arithmetic, printed with up to 2 decimals.
calc() { awk "BEGIN { v = $1; if (v == int(v)) printf \"%d\", v; else printf \"%.2f\", v }"; }
# met EXPR: "yes" when the awk expression EXPR holds, else "NO".
met() { awk "BEGIN { print ($1) ? \"yes\" : \"NO\" }"; }
ms() { calc "$1 / 1e6"; }

if [[ -z $report ]]; then
	step "building the benchmark binaries"
	go test -c -o "$work/root.test" .
	go test -c -o "$work/tools.test" ./tools
	go test -c -o "$work/gc.test" ./gc
fi

bench create root.test -test.bench 'BenchmarkCreate$' -test.benchtime 2s
bench sequential root.test -test.bench 'BenchmarkSequential/(dd-fdatasync|write|write-fsync)$' -test.benchtime 3x
forkfiles='1000|100000'
[[ -z ${FULL:-} ]] || forkfiles='1000|100000|1000000'
FORKSPACE_BENCH_1M=${FULL:-} bench fork root.test -test.bench "BenchmarkForkCheckpoint/files=($forkfiles)\$|BenchmarkForkRate" -test.benchtime 30x
bench open root.test -test.bench 'OpenStore|ListWorkspaces'
bench diff root.test -test.bench 'BenchmarkDiff$' -test.benchtime 5x
bench stat root.test -test.bench 'BenchmarkStatHistory|BenchmarkReadDir1k' -test.benchtime 2s
gcfiles=100000
[[ -z ${FULL:-} ]] || gcfiles=1000000
GCBENCH_FILES=$gcfiles GCBENCH_FORKS=100 GCBENCH_CHECKPOINTS=1000 bench gcplan gc.test -test.bench 'BenchmarkPlan$' -test.benchtime 3x
bench grep tools.test -test.bench 'Grep10k/literal/(forkspace|ripgrep)|Grep100k/.*/(forkspace|ripgrep)' -test.benchtime 10x
if [[ -z $report ]]; then
	step "import and export against cp -a and tar (bench/import-vs-cp.sh)"
	bash bench/import-vs-cp.sh >"$work/import.txt" 2>"$work/import.log"
	step "idle server memory (bench/serve-memory.sh 1000 100000)"
	bash bench/serve-memory.sh 1000 100000 >"$work/serve.txt" 2>"$work/serve.log"
fi

missed=
# row GOAL MEASURED LIMIT MET: one line of the table.
row() {
	printf '%-56s | %-34s | %-34s | %s\n' "$@"
	[[ $4 != NO ]] || missed=1
}
echo
row "goal" "measured" "limit, same run" "met"
row "----" "--------" "---------------" "---"

one=$(metric create BenchmarkCreate/library creates/s)
par=$(metric create BenchmarkCreate/library-parallel creates/s)
raw=$(metric create BenchmarkCreate/sqlite-1row-txn commits/s)
row "1. creates/s, one goroutine >= 10,000" "$(calc "int($one)")" "SQLite one-row commits/s $(calc "int($raw)")" "$(met "$one >= 10000")"
row "1. creates/s, concurrent >= 20,000" "$(calc "int($par)")" "" "$(met "$par >= 20000")"

read -r cp_ms import_ms tar_ms export_ms < <(awk '
	/^cp -a \+ sync +[0-9]/ { c = $(NF - 1) } /^forkspace import +[0-9]/ { i = $(NF - 1) }
	/^tar -cf +[0-9]/ { t = $(NF - 1) } /^forkspace export \(.tar\) +[0-9]/ { e = $(NF - 1) }
	END { print c, i, t, e }' "$work/import.txt")
row "2. import <= 1.5x cp -a + sync (Go tree)" "$import_ms ms ($(calc "$import_ms / $cp_ms")x)" "cp -a + sync $cp_ms ms" "$(met "$import_ms <= $(calc "1.5 * $cp_ms")")"
row "2. export <= 1.5x tar -cf (Go tree)" "$export_ms ms ($(calc "$export_ms / $tar_ms")x)" "tar -cf $tar_ms ms" "$(met "$export_ms <= $(calc "1.5 * $tar_ms")")"

dd=$(metric sequential BenchmarkSequential/dd-fdatasync MB/s)
wr=$(metric sequential BenchmarkSequential/write MB/s)
wf=$(metric sequential BenchmarkSequential/write-fsync MB/s)
row "3. write >= 1,000 MB/s without fsync" "$wr MB/s" "" "$(met "$wr >= 1000")"
row "3. write with fsync >= 0.9 of dd" "$wf MB/s ($(calc "$wf / $dd") of dd)" "dd conv=fdatasync $dd MB/s" "$(met "$wf >= $(calc "0.9 * $dd")")"

for n in ${forkfiles//|/ }; do
	f=$(metric fork "BenchmarkForkCheckpoint/files=$n" fork-p99-ms)
	c=$(metric fork "BenchmarkForkCheckpoint/files=$n" checkpoint-p99-ms)
	row "4. fork p99 <= 5 ms, checkpoint <= 3 ms, $n files" "$f / $c ms" "" "$(met "$f <= 5 && $c <= 3")"
done
for s in 0 1000; do
	r=$(metric fork "BenchmarkForkRate/staged=$s" forks/s)
	row "4. >= 1,000 forks/s, $s changes staged" "$(calc "$r")" "" "$(met "$r >= 1000")"
done

for n in 1000 10000 100000; do
	o=$(metric open "BenchmarkOpenStore/files=$n" ns/op)
	row "5. open + first read <= 20 ms, $n files" "$(ms "$o") ms" "" "$(met "$o <= 20e6")"
done
l=$(metric open BenchmarkListWorkspaces/workspaces=1000 ns/op)
row "5. open + list of 1,000 workspaces <= 50 ms" "$(ms "$l") ms" "" "$(met "$l <= 50e6")"
for c in 100 1000; do
	limit=$([[ $c == 100 ]] && echo 25e6 || echo 100e6)
	for folded in true false; do
		d=$(metric diff "BenchmarkDiff/files=100000/changed=$c/folded=$folded/cold" ns/op)
		row "5. cold diff, $c changes, folded=$folded" "$(ms "$d") ms" "goal $(ms "$limit") ms" "$(met "$d <= $limit")"
	done
done
p=$(metric gcplan BenchmarkPlan ns/op)
objs=$(metric gcplan BenchmarkPlan objects)
row "5. GC plan of 1M objects <= 2 s" "$(calc "$p / 1e9") s for $(calc "$objs") objects" "" "$([[ -n ${FULL:-} ]] && met "$p <= 2e9" || echo "FULL=1")"
read -r small small_peak big big_peak < <(awk '
	{ for (i = 1; i < NF; i++) if ($i == "VmHWM:") printf "%s %s ", $1, $(i + 1) }
	END { print "" }' "$work/serve.txt")
row "5. idle serve memory flat" "$big_peak MiB peak RSS at $big files" "$small_peak MiB at $small files" "$(met "$big_peak <= 1.5 * $small_peak")"

s0=$(metric stat BenchmarkStatHistory/history=none ns/op)
s1=$(metric stat BenchmarkStatHistory/history=1000cp-100forks ns/op)
row "6. stat >= 400k/s, ratio < 1.5 after history" "$(calc "int(1e9 / $s1)")/s (ratio $(calc "$s1 / $s0"))" "no history $(calc "int(1e9 / $s0)")/s" "$(met "1e9 / $s1 >= 400000 && $s1 / $s0 < 1.5")"
rd=$(metric stat BenchmarkReadDir1k ns/op)
row "6. readdir of 1k entries <= 0.2 ms" "$(calc "$rd / 1e6") ms" "" "$(met "$rd <= 2e5")"
for g in Grep10k/literal Grep100k/literal Grep100k/regex Grep100k/ignorecase; do
	f=$(metric grep "Benchmark$g/forkspace" ns/op)
	r=$(metric grep "Benchmark$g/ripgrep" ns/op)
	label=${g/Grep10k/10,000 files}
	label=${label/Grep100k/100,000 files}
	row "6. grep <= 1x ripgrep, ${label/\// }" "$(ms "$f") ms ($(calc "$f / $r")x)" "ripgrep $(ms "$r") ms" "$(met "$f <= $r")"
done
printf '\nload average: %s; raw output in %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" "${keep:-a removed temporary directory (set WORK to keep it)}"
[[ -z $missed ]] || { echo "engine.sh: a goal was not met on this run (NO above)" >&2; exit 1; }
