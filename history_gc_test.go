package forkspace_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
)

// TestGCKeepsTimeTravelStates collects garbage when a file's old bytes are
// reachable only through recorded states (overwritten, removed, folded,
// the head restored elsewhere): they stay while the retention policy
// keeps the states, and go once it drops them, and reading such a state
// then is ErrHistoryExpired, never wrong bytes.
func TestGCKeepsTimeTravelStates(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	mustCreate(t, st, "w")
	a := audited(t, st, "w")
	big := strings.Repeat("old line\n", 5000) // 45 KB: a blob
	if err := a.WriteFile(ctx, "f", []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteFile(ctx, "f", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Remove(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Root(ctx); err != nil { // fold: the head's tree no longer has it
		t.Fatal(err)
	}
	collect(t, st)
	if got := read(t, snapshot(t, st, "w@~2"), "f"); got != big {
		t.Fatalf("w@~2 after gc reads %d bytes", len(got))
	}
	if rep, err := st.Check(ctx); err != nil || !rep.Clean() {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	// Keep two steps: the next audited call drops the state with the big
	// file, and the next collection its blob.
	if err := st.SetHistoryRetention(ctx, audit.Retention{Steps: 2, Age: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteFile(ctx, "g", []byte("g"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := collect(t, st); n.Blobs == 0 {
		t.Fatalf("nothing reclaimed after the states past retention went: %+v", n)
	}
	if _, err := st.Snapshot(ctx, "w@~2"); !errors.Is(err, forkspace.ErrHistoryExpired) {
		t.Fatalf("w@~2 past retention: %v", err)
	}
	if got := read(t, snapshot(t, st, "w@~0"), "g"); got != "g" {
		t.Fatalf("w@~0 g = %q", got)
	}
	if rep, err := st.Check(ctx); err != nil || !rep.Clean() {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	for _, bad := range []audit.Retention{{Steps: 0, Age: time.Hour}, {Steps: 1, Age: -time.Second}} {
		if err := st.SetHistoryRetention(ctx, bad); err == nil {
			t.Errorf("SetHistoryRetention(%+v) accepted", bad)
		}
	}
	if r, err := st.HistoryRetention(ctx); err != nil || r != (audit.Retention{Steps: 2, Age: time.Hour}) {
		t.Fatalf("HistoryRetention = %+v, %v", r, err)
	}
}

// TestGCInterleavedWithTimeTravel collects garbage without grace in a loop
// while a workspace rewrites blob-sized files, folds and restores to
// earlier steps through audited calls; then every step still recorded
// reads back as it was written, and the store checks clean.
func TestGCInterleavedWithTimeTravel(t *testing.T) {
	ctx := context.Background()
	st, err := openPass(t, forkspace.Options{Dir: t.TempDir(), FoldRows: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mustCreate(t, st, "w")
	a := audited(t, st, "w")
	stop := collectLoop(t, st)
	content := func(i int) string { return strings.Repeat(fmt.Sprintf("%d\n", i), 6000) }
	want := map[int64]string{} // audit seq → f's content after it
	var seqs []int64
	for i := range 30 {
		if i%7 == 6 {
			back := seqs[len(seqs)/2]
			if err := a.Restore(ctx, "audit:"+strconv.FormatInt(back, 10)); err != nil {
				t.Fatal(err)
			}
		} else if err := a.WriteFile(ctx, "f", []byte(content(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		es := entries(t, st, a.Workspace)
		want[es[0].Seq] = read(t, a.FS, "f")
		seqs = append(seqs, es[0].Seq)
	}
	stop()
	collect(t, st)
	for _, seq := range seqs {
		if got := read(t, snapshot(t, st, "w@audit:"+strconv.FormatInt(seq, 10)), "f"); got != want[seq] {
			t.Fatalf("w@audit:%d reads %d bytes, want %d", seq, len(got), len(want[seq]))
		}
	}
	if rep, err := st.Check(ctx); err != nil || !rep.Clean() {
		t.Fatalf("check: %+v, %v", rep, err)
	}
}
