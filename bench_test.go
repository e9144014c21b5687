package forkspace_test

import (
	"archive/tar"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
	_ "modernc.org/sqlite" // the "sqlite" driver, for the raw commit rate
)

// Benchmarks of the storage core against the goals of DESIGN.md section 6.
// Results and the commands that produced them are in docs/benchmarks.md.
//
//	go test -run '^$' -bench . -benchtime 20x -timeout 60m .

// benchStore opens a store in a fresh temp dir; FoldRows is large so that
// staged changes stay staged until a fork or checkpoint folds them.
func benchStore(b *testing.B) *forkspace.Store {
	b.Helper()
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: b.TempDir(), FoldRows: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// populated returns a store holding workspace "base" populated with n files.
func populated(b *testing.B, n int) (*forkspace.Store, *forkspace.Workspace) {
	b.Helper()
	st := benchStore(b)
	w, err := st.Create(context.Background(), "base", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	populate(b, w, n)
	return st, w
}

// populate writes n files of about 10 KiB (n/100 per directory) and folds,
// so the workspace holds ~n*10 KiB of committed data.
func populate(b *testing.B, w *forkspace.Workspace, n int) {
	b.Helper()
	ctx := context.Background()
	data := make([]byte, 12<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.UintN(256))
	}
	for i := range n {
		dir := fmt.Sprintf("d%04d", i/100)
		if i%100 == 0 {
			if err := w.Mkdir(ctx, dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		// Vary content so bodies are distinct (no dedup shortcut).
		data[0], data[1], data[2] = byte(i), byte(i>>8), byte(i>>16)
		size := 8<<10 + i%(4<<10)
		if err := w.WriteFile(ctx, fmt.Sprintf("%s/f%06d", dir, i), data[:size], 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Fold(ctx); err != nil {
		b.Fatal(err)
	}
}

// imported returns workspace "base" of a fresh store holding n files of
// 100 bytes named as populate names them, imported from a tar stream
// generated on the fly, and folded.
func imported(b *testing.B, n int) *forkspace.Workspace {
	b.Helper()
	ctx := context.Background()
	w, err := benchStore(b).Create(ctx, "base", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		body := make([]byte, 100)
		var err error
		for i := 0; i < n && err == nil; i++ {
			if i%100 == 0 {
				err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: fmt.Sprintf("d%04d/", i/100), Mode: 0o755})
			}
			binary.LittleEndian.PutUint64(body, uint64(i))
			if err == nil {
				err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("d%04d/f%06d", i/100, i), Mode: 0o644, Size: int64(len(body))})
			}
			if err == nil {
				_, err = tw.Write(body)
			}
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	if err := transfer.ImportTar(ctx, w.FS, "/", pr, transfer.Options{}); err != nil {
		b.Fatal(err)
	}
	fold(b, w)
	return w
}

// fold folds the workspace's staging, so the next sample starts from an
// empty delta (FoldRows is disabled in benchmarks).
func fold(b *testing.B, w *forkspace.Workspace) {
	b.Helper()
	if err := w.Fold(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// stage makes k changes to random existing files (left in staging).
func stage(b *testing.B, w *forkspace.Workspace, n, k int, rng *rand.Rand) {
	b.Helper()
	ctx := context.Background()
	for range k {
		i := rng.IntN(n)
		name := fmt.Sprintf("d%04d/f%06d", i/100, i)
		if err := w.WriteFile(ctx, name, []byte("changed "+strconv.Itoa(rng.Int())), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// reportLatency reports p50 and p99 of samples in milliseconds as name-p50-ms
// and name-p99-ms.
func reportLatency(b *testing.B, name string, samples []time.Duration) {
	slices.Sort(samples)
	pct := func(p float64) float64 {
		return float64(samples[int(p*float64(len(samples)-1))]) / 1e6
	}
	b.ReportMetric(pct(0.50), name+"-p50-ms")
	b.ReportMetric(pct(0.99), name+"-p99-ms")
}

// BenchmarkForkCheckpoint measures fork and checkpoint of a live workspace
// of 1k/10k/100k files (~10 MiB/100 MiB/1 GiB) with exactly 1,000 staged
// changes each time (the delta is folded, untimed, between samples). ns/op includes staging the changes; the percentiles are the
// results.
//
// FORKSPACE_BENCH_1M=1 adds a workspace of 1,000,000 small files (100
// bytes each), imported from a generated tar stream in one bulk import.
func BenchmarkForkCheckpoint(b *testing.B) {
	sizes := []int{1_000, 10_000, 100_000}
	if os.Getenv("FORKSPACE_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		if testing.Short() && n > 10_000 {
			continue
		}
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			var w *forkspace.Workspace
			if n > 100_000 {
				w = imported(b, n)
			} else {
				_, w = populated(b, n)
			}
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(3, 4))
			var forks, cps []time.Duration
			i := 0
			for b.Loop() {
				stage(b, w, n, 1000, rng)
				t0 := time.Now()
				if _, err := w.Fork(ctx, "fork-"+strconv.Itoa(i), forkspace.ForkOptions{}); err != nil {
					b.Fatal(err)
				}
				forks = append(forks, time.Since(t0))
				fold(b, w)
				stage(b, w, n, 1000, rng)
				t0 = time.Now()
				if _, err := w.Checkpoint(ctx, strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
				cps = append(cps, time.Since(t0))
				fold(b, w)
				i++
			}
			reportLatency(b, "fork", forks)
			reportLatency(b, "checkpoint", cps)
		})
	}
}

// BenchmarkForkRate forks one 1k-file workspace over and over, as fast
// as one goroutine can: folded, and with 1,000 changes staged (the same
// ones each time), reporting forks per second (issue 9, goal 4: ≥ 1,000
// forks/s sustained).
func BenchmarkForkRate(b *testing.B) {
	for _, staged := range []int{0, 1000} {
		b.Run(fmt.Sprintf("staged=%d", staged), func(b *testing.B) {
			_, w := populated(b, 1_000)
			stage(b, w, 1_000, staged, rand.New(rand.NewPCG(7, 8)))
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if _, err := w.Fork(ctx, "fork-"+strconv.Itoa(i), forkspace.ForkOptions{}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "forks/s")
		})
	}
}

// BenchmarkStatHistory measures Stat on a 10k-file workspace with no
// history, then after 1,000 checkpoints and 100 forks.
func BenchmarkStatHistory(b *testing.B) {
	const n = 10_000
	st, w := populated(b, n)
	ctx := context.Background()
	statLoop := func(b *testing.B) {
		rng := rand.New(rand.NewPCG(5, 6))
		names := make([]string, 4096)
		for i := range names {
			j := rng.IntN(n)
			names[i] = fmt.Sprintf("d%04d/f%06d", j/100, j)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := w.Stat(ctx, names[i%len(names)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	b.Run("history=none", statLoop)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 1000 {
		stage(b, w, n, 1, rng)
		if _, err := w.Checkpoint(ctx, ""); err != nil {
			b.Fatal(err)
		}
		if i%10 == 0 {
			if _, err := w.Fork(ctx, "f"+strconv.Itoa(i), forkspace.ForkOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Measure reads, not the background folding of the new checkpoints.
	if err := st.FoldCheckpoints(ctx); err != nil {
		b.Fatal(err)
	}
	if err := w.Fold(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("history=1000cp-100forks", statLoop)
}

// BenchmarkCreate measures creating small files (WriteFile of 5 bytes,
// 1,000 per directory) through the library: from one goroutine, and from
// 8 goroutines per core on one workspace, whose creates share commits. The
// first sub-benchmark is the limit the same run measures: the SQLite
// driver committing one 5-byte row per transaction (same pragmas: WAL,
// synchronous=NORMAL, 8 KiB pages).
func BenchmarkCreate(b *testing.B) {
	b.Run("sqlite-1row-txn", benchRawCommits)
	b.Run("library", func(b *testing.B) {
		st := benchStore(b)
		ctx := context.Background()
		w, err := st.Create(ctx, "c", forkspace.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i%1000 == 0 {
				if err := w.Mkdir(ctx, "d"+strconv.Itoa(i/1000), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.WriteFile(ctx, fmt.Sprintf("d%d/f%d", i/1000, i), []byte("hello"), 0o644); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
	})
	b.Run("library-parallel", func(b *testing.B) {
		st := benchStore(b)
		ctx := context.Background()
		w, err := st.Create(ctx, "c", forkspace.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var next atomic.Int64
		b.ReportAllocs()
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := next.Add(1) - 1
				if i%1000 == 0 {
					if err := w.MkdirAll(ctx, "d"+strconv.Itoa(int(i/1000)), 0o755); err != nil {
						b.Error(err)
						return
					}
				}
				if err := w.WriteFile(ctx, fmt.Sprintf("d%d/f%d", i/1000, i), []byte("hello"), 0o644); errors.Is(err, fs.ErrNotExist) {
					// The goroutine that makes the directory is behind.
					err = w.MkdirAll(ctx, "d"+strconv.Itoa(int(i/1000)), 0o755)
					if err == nil {
						err = w.WriteFile(ctx, fmt.Sprintf("d%d/f%d", i/1000, i), []byte("hello"), 0o644)
					}
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
	})
}

// benchRawCommits commits one 5-byte row per transaction with the SQLite
// driver the store uses, on a database with the store's pragmas.
func benchRawCommits(b *testing.B) {
	ctx := context.Background()
	q := "?_pragma=page_size(8192)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "raw.db")+q)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"); err != nil {
		b.Fatal(err)
	}
	ins, err := db.PrepareContext(ctx, "INSERT INTO t (k, v) VALUES (?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	defer ins.Close()
	i := 0
	for b.Loop() {
		tx, err := db.BeginTx(ctx, nil)
		if err == nil {
			_, err = tx.StmtContext(ctx, ins).ExecContext(ctx, i, []byte("hello"))
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkReadDir1k lists a directory of 1,000 entries.
func BenchmarkReadDir1k(b *testing.B) {
	st := benchStore(b)
	ctx := context.Background()
	w, err := st.Create(ctx, "r", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Mkdir(ctx, "dir", 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if err := w.WriteFile(ctx, fmt.Sprintf("dir/entry-%04d", i), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Fold(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		es, err := w.ReadDir(ctx, "dir")
		if err != nil || len(es) != 1000 {
			b.Fatal(len(es), err)
		}
	}
}

// BenchmarkSequential writes and reads a 256 MiB file through the library
// on the local store: written and closed (durable against the death of
// the process), and written, fsynced and closed (durable against a power
// loss). Beside them the same run measures the disk: dd writing as many
// bytes to the same file system with conv=fdatasync, and the floor of the
// blob store's syscalls (rawFiles).
func BenchmarkSequential(b *testing.B) {
	const size = 256 << 20
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < size; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			data[i+j] = byte(v >> (8 * j))
		}
	}
	st := benchStore(b)
	ctx := context.Background()
	w, err := st.Create(ctx, "s", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("dd-fdatasync", func(b *testing.B) {
		if _, err := exec.LookPath("dd"); err != nil {
			b.Skip("no dd")
		}
		out := filepath.Join(b.TempDir(), "dd.out")
		b.SetBytes(size)
		var cpu time.Duration
		for b.Loop() {
			cmd := exec.Command("dd", "if=/dev/zero", "of="+out, "bs=1M", "count=256", "conv=fdatasync")
			if msg, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("dd: %v: %s", err, msg)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			os.Remove(out)
		}
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	})
	i := 0
	// writeFile writes the file once and collects its previous contents,
	// as dd's run removes its file: each side then writes into recycled
	// page cache (on this VM fresh guest pages cost several times more).
	writeFile := func(cpu *cpuMeter, fsync bool) error {
		// Fresh content each time in every 4 KiB (every chunk), so
		// dedup does not skip the work; off the clock, as dd's source
		// costs it nothing.
		cpu.stop()
		for off := 0; off < size; off += 4 << 10 {
			data[off], data[off+1] = byte(i), byte(i>>8)
		}
		i++
		cpu.resume()
		f, err := w.OpenFile(ctx, "big", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		for off := 0; off < size; off += 1 << 20 {
			if _, err := f.Write(data[off : off+1<<20]); err != nil {
				return err
			}
		}
		if fsync {
			if err := f.Sync(); err != nil {
				return err
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
		cpu.stop()
		defer cpu.resume()
		_, err = st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace})
		return err
	}
	write := func(b *testing.B, fsync bool) {
		b.SetBytes(size)
		cpu := startCPU(b)
		defer cpu.report()
		for b.Loop() {
			if err := writeFile(cpu, fsync); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Warm up: whichever variant ran first paid for the process's first
	// page cache and heap (twice the CPU of the second).
	for range 2 {
		if err := writeFile(startCPU(b), false); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("write", func(b *testing.B) { write(b, false) })
	b.Run("write-fsync", func(b *testing.B) { write(b, true) })
	b.Run("raw-files", func(b *testing.B) { rawFiles(b, data, false) })
	b.Run("raw-files-fsync", func(b *testing.B) { rawFiles(b, data, true) })
	b.Run("read", func(b *testing.B) {
		b.SetBytes(size)
		buf := make([]byte, 1<<20)
		for b.Loop() {
			f, err := w.OpenFile(ctx, "big", os.O_RDONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			var total int
			for {
				n, err := f.Read(buf)
				total += n
				if err != nil {
					break
				}
			}
			f.Close()
			if total != size {
				b.Fatalf("read %d bytes", total)
			}
		}
	})
}

// cpuMeter measures the process's CPU time (user and system) like
// b's timer, stopped and started with it, and reports it per iteration
// (cpu-s/op): on a shared machine the CPU a write costs is steadier than
// its wall time.
type cpuMeter struct {
	b     *testing.B
	used  time.Duration
	start time.Duration
}

func startCPU(b *testing.B) *cpuMeter { return &cpuMeter{b: b, start: processCPU()} }

func (m *cpuMeter) stop() {
	m.b.StopTimer()
	m.used += processCPU() - m.start
}

func (m *cpuMeter) resume() {
	m.start = processCPU()
	m.b.StartTimer()
}

func (m *cpuMeter) report() {
	m.used += processCPU() - m.start
	if m.b.N > 0 {
		m.b.ReportMetric(m.used.Seconds()/float64(m.b.N), "cpu-s/op")
	}
}

// BenchmarkDiff diffs a 100k-file workspace against a fork with k changed
// files, folded and left staged as an agent leaves them: the time should
// follow k, not the workspace size, either way. The warm diffs run on the
// store that built the forks (its node cache holds what the previous
// iteration read); then that store is closed and each cold diff runs on a
// store freshly opened on the directory, as a `forkspace diff` call pays
// (opening is not timed).
func BenchmarkDiff(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	ctx := context.Background()
	opts := forkspace.Options{Dir: b.TempDir(), FoldRows: 1 << 20}
	st, err := forkspace.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	w, err := st.Create(ctx, "base", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	populate(b, w, n)
	rng := rand.New(rand.NewPCG(11, 12))
	type fork struct{ name, bench string }
	var forks []fork
	for _, k := range []int{1, 10, 100, 1000} {
		for _, fold := range []bool{true, false} {
			f, err := w.Fork(ctx, fmt.Sprintf("k%d-%t", k, fold), forkspace.ForkOptions{})
			if err != nil {
				b.Fatal(err)
			}
			stage(b, f, n, k, rng)
			if fold {
				if err := f.Fold(ctx); err != nil {
					b.Fatal(err)
				}
			}
			forks = append(forks, fork{f.Name(), fmt.Sprintf("files=%d/changed=%d/folded=%t", n, k, fold)})
			b.Run(forks[len(forks)-1].bench+"/warm", func(b *testing.B) {
				cpu := cpuTime()
				for b.Loop() {
					if _, err := st.Diff(ctx, "base", f.Name(), vfs.DiffOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpuTime()-cpu)
			})
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	for _, f := range forks {
		b.Run(f.bench+"/cold", func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				cold, err := forkspace.Open(ctx, opts)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := cpuTime()
				if _, err := cold.Diff(ctx, "base", f.name, vfs.DiffOptions{}); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - start
				b.StopTimer()
				if err := cold.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports cpu, the process's CPU time over the benchmark's
// iterations, as cpu-ms/op (the figure to compare on a loaded machine).
func reportCPU(b *testing.B, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	}
}
