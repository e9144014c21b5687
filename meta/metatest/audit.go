package metatest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// auditTx returns tx's audit log methods.
func auditTx(tx meta.Tx) meta.AuditTx { return tx }

// testAudit appends entries and reads them back through every filter.
func testAudit(t *testing.T, s meta.Store) {
	at := time.Unix(1700000000, 123456789).UTC()
	entries := []meta.AuditEntry{
		{WorkspaceID: "w1", Actor: "alice", Session: "s1", Tool: "write", ArgsDigest: "d1", Duration: time.Millisecond, Changed: []string{"a.txt"}},
		{WorkspaceID: "w2", Actor: "bob", Session: "s2", Tool: "exec", Error: "exit status 1", Changed: []string{"x", "y/z"}, Checkpoint: "cp-1", Detail: "exit code 1; 0.10s CPU", Command: "make test"},
		{WorkspaceID: "w1", Session: "s2", Tool: "rm", Time: at},
		{Tool: "create"},
	}
	var last int64
	for i := range entries {
		update(t, s, func(tx meta.Tx) error { return auditTx(tx).AppendAudit(&entries[i]) })
		e := entries[i]
		if e.Seq <= last {
			t.Errorf("AppendAudit #%d: Seq %d not above %d", i, e.Seq, last)
		}
		last = e.Seq
		if e.Time.IsZero() || (i != 2 && !closeTo(e.Time, time.Now(), time.Minute)) {
			t.Errorf("AppendAudit #%d: Time %v, want the database's now", i, e.Time)
		}
	}
	if !entries[2].Time.Equal(at) {
		t.Errorf("AppendAudit kept Time %v, want %v", entries[2].Time, at)
	}
	// A failing Update leaves no entry, and its Seq is not reused visibly.
	boom := errors.New("boom")
	err := s.Update(t.Context(), func(tx meta.Tx) error {
		if err := auditTx(tx).AppendAudit(&meta.AuditEntry{Tool: "lost"}); err != nil {
			return err
		}
		return boom
	})
	wantErr(t, "Update that fails", err, boom)

	seqs := func(es []meta.AuditEntry) []int64 {
		var out []int64
		for _, e := range es {
			out = append(out, e.Seq)
		}
		return out
	}
	all := []int64{entries[3].Seq, entries[2].Seq, entries[1].Seq, entries[0].Seq}
	tests := []struct {
		name string
		f    meta.AuditFilter
		want []int64
	}{
		{"all newest first", meta.AuditFilter{}, all},
		{"workspace", meta.AuditFilter{WorkspaceID: "w1"}, []int64{entries[2].Seq, entries[0].Seq}},
		{"session", meta.AuditFilter{Session: "s2"}, []int64{entries[2].Seq, entries[1].Seq}},
		{"workspace and session", meta.AuditFilter{WorkspaceID: "w1", Session: "s2"}, []int64{entries[2].Seq}},
		{"limit", meta.AuditFilter{Limit: 2}, all[:2]},
		{"before", meta.AuditFilter{Before: entries[2].Seq}, all[2:]},
		{"before and limit", meta.AuditFilter{Before: entries[3].Seq, Limit: 1}, all[1:2]},
		{"no match", meta.AuditFilter{WorkspaceID: "none"}, nil},
	}
	view(t, s, func(tx meta.Tx) error {
		for _, tc := range tests {
			got, err := auditTx(tx).Audit(tc.f)
			if err != nil || !slices.Equal(seqs(got), tc.want) {
				t.Errorf("Audit(%s) = %v, %v; want %v", tc.name, seqs(got), err, tc.want)
			}
		}
		got, err := auditTx(tx).Audit(meta.AuditFilter{})
		if err != nil {
			return err
		}
		for i, g := range got {
			if d := sameAudit(g, entries[len(entries)-1-i]); d != "" {
				t.Errorf("Audit entry %d: %s", g.Seq, d)
			}
		}
		err = auditTx(tx).AppendAudit(&meta.AuditEntry{Tool: "view"})
		wantErr(t, "AppendAudit in a View", err, errdefs.ErrReadOnly)
		return nil
	})
}

// sameAudit reports how got differs from want ("" if equal); a nil and an
// empty Changed are the same.
func sameAudit(got, want meta.AuditEntry) string {
	if got.Seq != want.Seq || !got.Time.Equal(want.Time) || got.WorkspaceID != want.WorkspaceID ||
		got.Actor != want.Actor || got.Session != want.Session || got.Tool != want.Tool ||
		got.ArgsDigest != want.ArgsDigest || got.Error != want.Error || got.Duration != want.Duration ||
		!slices.Equal(got.Changed, want.Changed) || got.Checkpoint != want.Checkpoint ||
		got.Detail != want.Detail || got.Command != want.Command {
		return fmt.Sprintf("got %+v, want %+v", got, want)
	}
	return ""
}
