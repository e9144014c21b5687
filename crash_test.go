package forkspace_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace/internal/pgtest"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
)

// The crash test re-executes this test binary as a writer that creates,
// writes, fsyncs, renames and removes files in a loop, printing each
// operation only after it returned. The parent kills it with SIGKILL at a
// random moment, reopens the store and checks that every acknowledged
// operation is intact and that nothing is half-applied.

const crashEnv = "FORKSPACE_CRASH_WRITER"

func TestMain(m *testing.M) {
	for env, writer := range map[string]func(string) error{crashEnv: crashWriter, mergeCrashEnv: mergeCrashWriter, closeCrashEnv: closeCrashWriter, importCrashEnv: importCrashWriter} {
		if spec := os.Getenv(env); spec != "" {
			if err := writer(spec); err != nil {
				fmt.Fprintln(os.Stderr, "crash writer:", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	pgtest.Main(m) // shared_test.go: stores on PostgreSQL
}

// crashContent is the deterministic content of file i: mostly small
// (inline) files, every seventh one large enough to be chunked.
func crashContent(i int) []byte {
	size := 100 + i%3000
	if i%7 == 0 {
		size = 20<<10 + (i%5)*(150<<10)
	}
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(i), 99))
	for j := range b {
		b[j] = byte(r.UintN(256))
	}
	return b
}

// deletable reports whether the writer removes file i (two steps after
// writing it).
func deletable(i int) bool { return i%5 == 2 }

// crashWorkspace opens workspace "crash" of the store named by a crash
// writer's spec ("DIR:START") and returns it with START.
func crashWorkspace(spec string, opts forkspace.Options) (*forkspace.Workspace, int, error) {
	dir, startStr, _ := strings.Cut(spec, ":")
	start, err := strconv.Atoi(startStr)
	if err != nil {
		return nil, 0, err
	}
	opts.Dir = dir
	st, err := openPass(nil, opts)
	if err != nil {
		return nil, 0, err
	}
	w, err := st.Workspace(context.Background(), "crash")
	return w, start, err
}

// writeCrashFile creates name with crashContent(i), written 64 KiB at a
// time, and returns the open handle.
func writeCrashFile(ctx context.Context, w *forkspace.Workspace, name string, i int) (*vfs.File, error) {
	f, err := w.OpenFile(ctx, name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	data := crashContent(i)
	for off := 0; off < len(data); off += 64 << 10 {
		if _, err := f.Write(data[off:min(off+64<<10, len(data))]); err != nil {
			return nil, errors.Join(err, f.Close())
		}
	}
	return f, nil
}

func crashWriter(spec string) error {
	w, start, err := crashWorkspace(spec, forkspace.Options{FoldRows: 64})
	if err != nil {
		return err
	}
	ctx := context.Background()
	ack := func(format string, args ...any) { fmt.Fprintf(os.Stdout, format+"\n", args...) }
	for i := start; ; i++ {
		tmp, done := fmt.Sprintf("tmp/f%06d", i), fmt.Sprintf("done/f%06d", i)
		f, err := writeCrashFile(ctx, w, tmp, i)
		if err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		ack("S %d", i)
		if err := f.Close(); err != nil {
			return err
		}
		if err := w.Rename(ctx, tmp, done); err != nil {
			return err
		}
		ack("R %d", i)
		if deletable(i - 2) {
			if err := w.Remove(ctx, fmt.Sprintf("done/f%06d", i-2)); err != nil {
				return err
			}
			ack("D %d", i-2)
		}
		if i%40 == 39 {
			cp, err := w.Checkpoint(ctx, strconv.Itoa(i))
			if err != nil {
				return err
			}
			ack("C %s", cp.ID)
		}
	}
}

func TestCrashSafety(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openPass(t, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := mustCreate(t, st, "crash")
	for _, d := range []string{"tmp", "done"} {
		if err := w.Mkdir(ctx, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	synced, renamed, deleted := map[int]bool{}, map[int]bool{}, map[int]bool{}
	var checkpoints []string
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	const rounds = 12
	for round := range rounds {
		start := round * 100_000
		// Kill after a random number of acknowledged operations, or a
		// random delay, whichever comes first.
		killAfter := 5 + rng.IntN(120)
		delay := time.Duration(200+rng.IntN(1500)) * time.Millisecond
		runKilled(t, fmt.Sprintf("%s=%s:%d", crashEnv, dir, start), killAfter, delay, func(line string) {
			op, arg, _ := strings.Cut(line, " ")
			i, _ := strconv.Atoi(arg)
			switch op {
			case "S":
				synced[i] = true
			case "R":
				renamed[i] = true
			case "D":
				deleted[i] = true
			case "C":
				checkpoints = append(checkpoints, arg)
			}
		})
		verifyCrashState(t, dir, synced, renamed, deleted, checkpoints)
	}
	t.Logf("%d rounds: %d files synced, %d renamed, %d deleted, %d checkpoints acknowledged", rounds, len(synced), len(renamed), len(deleted), len(checkpoints))
}

// runKilled runs this test binary as a writer (env selects it in
// TestMain), passes each line it prints to onLine, and kills it with
// SIGKILL after killAfter lines or delay, whichever comes first; the
// writer must end by that kill.
func runKilled(t *testing.T, env string, killAfter int, delay time.Duration, onLine func(string)) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(delay, func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	n := 0
	for sc.Scan() {
		onLine(sc.Text())
		if n++; n == killAfter {
			cmd.Process.Kill()
		}
	}
	timer.Stop()
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ProcessState.Sys() == nil || !strings.Contains(exit.Error(), "killed") {
		t.Fatalf("writer ended with %v, not by SIGKILL; stderr: %s", err, stderr.String())
	}
}

func verifyCrashState(t *testing.T, dir string, synced, renamed, deleted map[int]bool, checkpoints []string) {
	t.Helper()
	ctx := context.Background()
	st, err := openPass(t, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer st.Close()
	w, err := st.Workspace(ctx, "crash")
	if err != nil {
		t.Fatalf("open workspace after SIGKILL: %v", err)
	}
	exists := func(name string) ([]byte, bool) {
		b, err := w.ReadFile(ctx, name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false
		}
		if err != nil {
			t.Fatalf("read %s after SIGKILL: %v", name, err)
		}
		return b, true
	}
	for i := range synced {
		tmpData, inTmp := exists(fmt.Sprintf("tmp/f%06d", i))
		doneData, inDone := exists(fmt.Sprintf("done/f%06d", i))
		want := crashContent(i)
		switch {
		case inTmp && inDone:
			t.Fatalf("file %d is both at its old and its new name: a half-applied rename", i)
		case deleted[i]:
			if inTmp || inDone {
				t.Fatalf("file %d was removed (acknowledged) but exists", i)
			}
		case renamed[i] && !inDone && !(deletable(i) && renamed[i+2]):
			// Once file i+2 is renamed the writer removes file i; a kill
			// between that removal and its acknowledgement leaves i gone
			// without a "D" line, which is allowed.
			t.Fatalf("file %d was renamed (acknowledged) but is missing at its new name", i)
		case !inTmp && !inDone && !(renamed[i] && deletable(i) && renamed[i+2]):
			t.Fatalf("file %d was synced (acknowledged) but is gone", i)
		case inTmp && !bytes.Equal(tmpData, want), inDone && !bytes.Equal(doneData, want):
			t.Fatalf("file %d was synced (acknowledged) but its content differs", i)
		}
	}
	// Files the writer never acknowledged may exist, empty (created, not
	// yet synced) or whole; never partial.
	for _, d := range []string{"tmp", "done"} {
		entries, err := w.ReadDir(ctx, d)
		if err != nil {
			t.Fatalf("readdir %s: %v", d, err)
		}
		for _, e := range entries {
			i, _ := strconv.Atoi(strings.TrimPrefix(e.Name(), "f"))
			b, _ := exists(d + "/" + e.Name())
			if len(b) != 0 && !bytes.Equal(b, crashContent(i)) {
				t.Fatalf("%s/%s holds a partial write (%d bytes)", d, e.Name(), len(b))
			}
		}
	}
	cps, err := w.Checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, c := range cps {
		have[c.ID] = true
	}
	for _, id := range checkpoints {
		if !have[id] {
			t.Fatalf("acknowledged checkpoint %s is missing", id)
		}
	}
}

// closeCrashEnv selects closeCrashWriter: files written and closed, never
// fsynced, which must survive the death of the process
// (docs/decisions/021).
const closeCrashEnv = "FORKSPACE_CLOSE_CRASH_WRITER"

// closeCrashWriter writes file i with crashContent(i) and closes it,
// printing "W i" after Close returned; no Sync.
func closeCrashWriter(spec string) error {
	w, start, err := crashWorkspace(spec, forkspace.Options{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	for i := start; ; i++ {
		f, err := writeCrashFile(ctx, w, fmt.Sprintf("f%06d", i), i)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "W %d\n", i)
	}
}

// TestCrashAfterClose kills a writer that closes files without fsync at
// random moments: every file whose Close returned is whole after the
// kill (its bytes were in the operating system), and the store checks
// clean.
func TestCrashAfterClose(t *testing.T) {
	ctx := context.Background()
	n := killRounds(t, 6, 40, func(dir string, round int) string {
		return fmt.Sprintf("%s=%s:%d", closeCrashEnv, dir, round*100_000)
	}, "W ", func(w *forkspace.Workspace, closed map[int]bool) {
		for i := range closed {
			b, err := w.ReadFile(ctx, fmt.Sprintf("f%06d", i))
			if err != nil || !bytes.Equal(b, crashContent(i)) {
				t.Fatalf("file %d was closed (acknowledged) before the kill: %d bytes, %v", i, len(b), err)
			}
		}
	})
	t.Logf("%d closed files checked after 6 kills", n)
}

// killRounds runs a crash writer (env(dir, round) selects it and its
// arguments) rounds times on a store with an empty workspace "crash",
// killing it after up to maxAcks acknowledgements (lines starting with
// prefix and a number) or a random delay; after each kill it reopens the
// store, calls verify with every number acknowledged so far, and checks
// that the store is clean. It returns how many were acknowledged.
func killRounds(t *testing.T, rounds, maxAcks int, env func(dir string, round int) string, prefix string, verify func(*forkspace.Workspace, map[int]bool)) int {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openPass(t, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, st, "crash")
	st.Close()
	acked := map[int]bool{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for round := range rounds {
		runKilled(t, env(dir, round), 1+rng.IntN(maxAcks), time.Duration(100+rng.IntN(900))*time.Millisecond, func(line string) {
			if i, err := strconv.Atoi(strings.TrimPrefix(line, prefix)); err == nil {
				acked[i] = true
			}
		})
		st, err := openPass(t, forkspace.Options{Dir: dir})
		if err != nil {
			t.Fatalf("reopen after SIGKILL: %v", err)
		}
		w, err := st.Workspace(ctx, "crash")
		if err != nil {
			t.Fatal(err)
		}
		verify(w, acked)
		r, err := st.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Clean() {
			t.Fatalf("store after SIGKILL is damaged: %+v", r.Problems)
		}
		st.Close()
	}
	return len(acked)
}

// importCrashEnv selects importCrashWriter: whole directory imports, each
// one batch whose chunks are synced together before its commit. The
// writer's FoldRows (importFoldRows) makes a big import's batch fold
// ahead, storing tree nodes before its commit as well as inline bodies
// (vfs.FS.Batch).
const importCrashEnv = "FORKSPACE_IMPORT_CRASH_WRITER"

// importCrashTree writes the host trees the import crash writer imports:
// small/ holds small (inline) files and chunked ones in a few directories;
// big/ holds the same and bulkFiles inline files of 15 KiB in bulk/, more
// than a batch holds before it stores inline bodies ahead of its commit
// (vfs.FS.Batch).
func importCrashTree(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for _, tree := range []string{"small", "big"} {
		for i := range 60 {
			dir := filepath.Join(src, tree, fmt.Sprintf("d%d", i%4))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", i)), crashContent(i), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(src, "big", "bulk"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range bulkFiles {
		if err := os.WriteFile(filepath.Join(src, "big", "bulk", fmt.Sprint(i)), bulkContent(i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// bigImport reports whether import i of the crash writer is of big/.
func bigImport(i int) bool { return i%2 == 1 }

// importFoldRows is the import crash writer's FoldRows: a batch folds
// ahead past 4 × 64 keys of overlay, which a big import (1,260 files)
// passes many times over and a small one (60 files) at most once.
const importFoldRows = 64

// bulkFiles is how many files importCrashTree writes to bulk/ (17.6 MiB).
const bulkFiles = 1200

// bulkContent is the content of bulk/i: 15 KiB, distinct per file.
func bulkContent(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%015d\n", i)), 960)
}

// importCrashWriter imports the trees at SRC (spec "DIR:START:SRC"), small/
// and big/ in turn, under a new directory imp<i> again and again, printing
// "I i" after each import returned.
func importCrashWriter(spec string) error {
	rest, src, _ := strings.Cut(spec, "|")
	w, start, err := crashWorkspace(rest, forkspace.Options{FoldRows: importFoldRows})
	if err != nil {
		return err
	}
	for i := start; ; i++ {
		tree := filepath.Join(src, "small")
		if bigImport(i) {
			tree = filepath.Join(src, "big")
		}
		if err := transfer.ImportDir(context.Background(), w.FS, fmt.Sprintf("imp%06d", i), tree, transfer.Options{}); err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "I %d\n", i)
	}
}

// TestCrashDuringImport kills a process importing directory trees at
// random moments: every acknowledged import is whole, and an import the
// kill interrupted is either whole or absent, never partly visible; the
// store checks clean.
func TestCrashDuringImport(t *testing.T) {
	ctx := context.Background()
	src := importCrashTree(t)
	n := killRounds(t, 5, 6, func(dir string, round int) string {
		return fmt.Sprintf("%s=%s:%d|%s", importCrashEnv, dir, round*100_000, src)
	}, "I ", func(w *forkspace.Workspace, acked map[int]bool) {
		present := map[int]bool{}
		ents, err := w.ReadDir(ctx, ".")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			i, _ := strconv.Atoi(strings.TrimPrefix(e.Name(), "imp"))
			present[i] = true
			for j := range 60 {
				name := fmt.Sprintf("%s/d%d/f%02d", e.Name(), j%4, j)
				b, err := w.ReadFile(ctx, name)
				if err != nil || !bytes.Equal(b, crashContent(j)) {
					t.Fatalf("import %d is partly visible: %s: %d bytes, %v", i, name, len(b), err)
				}
			}
			if !bigImport(i) {
				continue
			}
			bulk, err := w.ReadDir(ctx, e.Name()+"/bulk")
			if err != nil || len(bulk) != bulkFiles {
				t.Fatalf("import %d is partly visible: bulk/ holds %d files (%v)", i, len(bulk), err)
			}
			for j := 0; j < bulkFiles; j += 97 {
				name := fmt.Sprintf("%s/bulk/%d", e.Name(), j)
				if b, err := w.ReadFile(ctx, name); err != nil || !bytes.Equal(b, bulkContent(j)) {
					t.Fatalf("import %d is partly visible: %s: %d bytes, %v", i, name, len(b), err)
				}
			}
		}
		for i := range acked {
			if !present[i] {
				t.Fatalf("import %d was acknowledged but is gone", i)
			}
		}
	})
	t.Logf("%d acknowledged imports checked after 5 kills", n)
}
