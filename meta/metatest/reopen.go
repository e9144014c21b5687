package metatest

import (
	"bytes"
	"context"
	"testing"

	"github.com/forkspace/forkspace/meta"
)

// RunReopen checks that a persistent store keeps every kind of row across
// Close and a new open: open must open the same database each time it is
// called within the test (the first call creates it empty).
func RunReopen(t *testing.T, open Opener) {
	s := open(t)
	update(t, s, func(tx meta.Tx) error { return writeEverything(tx, "kept") })
	var counter int64
	update(t, s, func(tx meta.Tx) (err error) {
		if err := tx.SetRoot("id-kept", hashOf("root")); err != nil {
			return err
		}
		counter, err = tx.Allocate("inode", 100)
		return err
	})
	var before *meta.Workspace
	view(t, s, func(tx meta.Tx) (err error) {
		before, err = tx.Workspace("id-kept")
		return err
	})
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = open(t)
	if m := presence(t, s, "kept"); m != allRows {
		t.Errorf("after reopen: rows mask %b, want %b", m, allRows)
	}
	view(t, s, func(tx meta.Tx) error {
		w, err := tx.Workspace("id-kept")
		if err != nil {
			t.Errorf("Workspace after reopen: %v", err)
		} else if d := sameWorkspace(*w, *before); d != "" {
			t.Errorf("Workspace after reopen: %s", d)
		}
		return nil
	})
	data, err := s.GetNode(context.Background(), hashOf("node-kept"))
	if err != nil || !bytes.Equal(data, []byte("kept")) {
		t.Errorf("GetNode after reopen = %q, %v", data, err)
	}
	var next int64
	update(t, s, func(tx meta.Tx) (err error) {
		next, err = tx.Allocate("inode", 1)
		return err
	})
	if next != counter+100 {
		t.Errorf("counter after reopen = %d, want %d (never repeat)", next, counter+100)
	}
}
