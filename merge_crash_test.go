package forkspace_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
)

// The merge crash test re-executes this test binary as a writer that
// forks, writes a round of files in the fork and merges it back, in a
// loop, printing "M i" once merge i returned. The parent kills it with
// SIGKILL at a random moment and checks that each round is in the parent
// whole, with the checkpoint the merge took, or not at all.

const mergeCrashEnv = "FORKSPACE_MERGE_CRASH_WRITER"

const mergeCrashFiles = 150

func mergeCrashWriter(spec string) error {
	dir, startStr, _ := strings.Cut(spec, ":")
	start, err := strconv.Atoi(startStr)
	if err != nil {
		return err
	}
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir})
	if err != nil {
		return err
	}
	p, err := st.Workspace(ctx, "p")
	if err != nil {
		return err
	}
	for i := start; ; i++ {
		f, err := p.Fork(ctx, fmt.Sprintf("f%d", i), forkspace.ForkOptions{})
		if err != nil {
			return err
		}
		err = f.Batch(ctx, func(b *vfs.FS) error {
			if err := b.Mkdir(ctx, fmt.Sprintf("r%d", i), 0o755); err != nil {
				return err
			}
			for k := range mergeCrashFiles {
				if err := b.WriteFile(ctx, fmt.Sprintf("r%d/k%03d", i, k), []byte(fmt.Sprint(i, k)), 0o644); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if _, err := p.Merge(ctx, f.Name(), forkspace.MergeOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "M %d\n", i)
	}
}

func TestMergeAtomicUnderKill(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, st, "p")
	st.Close()
	merged := map[int]bool{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	const rounds = 6
	for round := range rounds {
		start := round * 1000
		killAfter := 1 + rng.IntN(6)
		delay := time.Duration(100+rng.IntN(1500)) * time.Millisecond
		runKilled(t, fmt.Sprintf("%s=%s:%d", mergeCrashEnv, dir, start), killAfter, delay, func(line string) {
			if i, err := strconv.Atoi(strings.TrimPrefix(line, "M ")); err == nil {
				merged[i] = true
			}
		})
		verifyMergeCrash(t, dir, start, merged)
	}
	t.Logf("%d rounds, %d merges acknowledged", rounds, len(merged))
}

// verifyMergeCrash checks the rounds from start on: a round is in p whole
// with its checkpoint, or not at all, and whole when acknowledged.
func verifyMergeCrash(t *testing.T, dir string, start int, merged map[int]bool) {
	t.Helper()
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer st.Close()
	p, err := st.Workspace(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	cps, err := p.Checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	for _, c := range cps {
		labels[c.Label] = true
	}
	for i := start; i < start+1000; i++ {
		entries, err := p.ReadDir(ctx, fmt.Sprintf("r%d", i))
		if errors.Is(err, fs.ErrNotExist) {
			if merged[i] {
				t.Fatalf("merge %d was acknowledged but its files are missing", i)
			}
			if labels[fmt.Sprintf("merge: before f%d", i)] {
				t.Fatalf("merge %d left its checkpoint but not its files", i)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != mergeCrashFiles || !labels[fmt.Sprintf("merge: before f%d", i)] {
			t.Fatalf("merge %d is half applied: %d files, checkpoint %v", i, len(entries), labels[fmt.Sprintf("merge: before f%d", i)])
		}
	}
}
