package sandbox

import (
	"context"
	"os"
	"testing"

	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/provider"
)

// TestAutoMode: the default mode runs on the mount while the work dir
// holds nothing (nothing is written to it, and it stays so), and
// materializes once a run in ModeCopy filled it.
func TestAutoMode(t *testing.T) {
	_, ws := newWorkspace(t)
	writeWS(t, ws, "a", "a\n", 0o644)
	work := sandboxtest.WorkDir(t)
	auto := New(ws, Options{WorkDir: work})
	defer auto.Close()
	for range 2 {
		if res := mustExec(t, auto, "cat a; echo b > b"); res.Stdout != "a\n" || !res.PulledBack {
			t.Fatalf("auto run: %+v", res)
		}
		if ents, _ := os.ReadDir(work); len(ents) != 0 {
			t.Fatalf("a run in the default mode materialized %d entries", len(ents))
		}
	}
	noScratch(t, auto, ws)
	copyShell := New(ws, Options{WorkDir: work, Mode: ModeCopy})
	defer copyShell.Close()
	mustExec(t, copyShell, "true")
	if res := mustExec(t, auto, "echo c > c"); auto.Stats().Written != 0 || len(res.Changed) != 1 {
		t.Fatalf("auto after materializing: %+v, stats %+v", res, auto.Stats())
	}
	sameTree(t, auto, ws) // materialized and in sync: the copy mode ran
}

// TestFUSEDropsLikeCopy: on the mount, changes under read-only prefixes
// and special files are dropped with the reasons of the materialized
// mode, and the rest lands.
func TestFUSEDropsLikeCopy(t *testing.T) {
	needPython(t)
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			s, ws := newShell(t, Options{Mode: mode, ReadOnly: []string{"ro"}})
			writeWS(t, ws, "ro/f", "kept\n", 0o644)
			res, err := s.Exec(context.Background(), provider.ExecRequest{Command: "echo no > ro/f; echo no > ro/g; mkfifo pipe; " +
				`python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'; echo yes > ok`})
			if err != nil {
				t.Fatal(err)
			}
			reasons := map[string]string{}
			for _, d := range res.Dropped {
				reasons[d.Path] = d.Reason
			}
			want := map[string]string{"ro/f": reasonReadOnly, "ro/g": reasonReadOnly, "pipe": reasonSpecial, "sock": reasonSpecial}
			for p, r := range want {
				if reasons[p] != r {
					t.Errorf("%s dropped for %q, want %q (dropped %+v)", p, reasons[p], r, res.Dropped)
				}
			}
			if len(res.Changed) != 1 || res.Changed[0].Path != "ok" {
				t.Errorf("changed %+v", res.Changed)
			}
			if got, _ := readWS(t, ws, "ro/f"); got != "kept\n" {
				t.Errorf("ro/f = %q", got)
			}
			if _, ok := readWS(t, ws, "pipe"); ok {
				t.Error("a FIFO reached the workspace")
			}
		})
	}
}
