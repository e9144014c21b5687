package metatest

import (
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// testAuditFeed reads the log forwards (After, Ascending) and prunes it,
// as the change feed does.
func testAuditFeed(t *testing.T, s meta.Store) {
	old := time.Unix(1600000000, 0).UTC()
	var seqs []int64
	for i, ws := range []string{"w1", "w2", "w1", "w1", "w2"} {
		e := meta.AuditEntry{WorkspaceID: ws, Tool: "write"}
		if i < 2 {
			e.Time = old.Add(time.Duration(i) * time.Second)
		}
		update(t, s, func(tx meta.Tx) error { return auditTx(tx).AppendAudit(&e) })
		seqs = append(seqs, e.Seq)
	}
	read := func(f meta.AuditFilter) []int64 {
		t.Helper()
		var got []int64
		view(t, s, func(tx meta.Tx) error {
			es, err := auditTx(tx).Audit(f)
			for _, e := range es {
				got = append(got, e.Seq)
			}
			return err
		})
		return got
	}
	tests := []struct {
		name string
		f    meta.AuditFilter
		want []int64
	}{
		{"ascending", meta.AuditFilter{Ascending: true}, seqs},
		{"after", meta.AuditFilter{After: seqs[1], Ascending: true}, seqs[2:]},
		{"after and limit", meta.AuditFilter{After: seqs[0], Ascending: true, Limit: 2}, seqs[1:3]},
		{"after and workspace", meta.AuditFilter{After: seqs[0], Ascending: true, WorkspaceID: "w1"}, []int64{seqs[2], seqs[3]}},
		{"after, newest first", meta.AuditFilter{After: seqs[2]}, []int64{seqs[4], seqs[3]}},
		{"after the last", meta.AuditFilter{After: seqs[4], Ascending: true}, nil},
		{"after and before", meta.AuditFilter{After: seqs[0], Before: seqs[3], Ascending: true}, seqs[1:3]},
	}
	for _, tc := range tests {
		if got := read(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("Audit(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}

	view(t, s, func(tx meta.Tx) error {
		if n, err := auditTx(tx).AuditPruned(); n != 0 || err != nil {
			t.Errorf("AuditPruned before any pruning = %d, %v; want 0", n, err)
		}
		_, err := auditTx(tx).PruneAudit(time.Now())
		wantErr(t, "PruneAudit in a View", err, errdefs.ErrReadOnly)
		return nil
	})
	prune := func(before time.Time) int64 {
		t.Helper()
		var through int64
		update(t, s, func(tx meta.Tx) error {
			var err error
			through, err = auditTx(tx).PruneAudit(before)
			return err
		})
		return through
	}
	if got := prune(old); got != 0 {
		t.Errorf("PruneAudit(before the oldest) = %d, want 0", got)
	}
	if got := prune(old.Add(time.Hour)); got != seqs[1] {
		t.Errorf("PruneAudit = %d, want %d", got, seqs[1])
	}
	if got := read(meta.AuditFilter{Ascending: true}); !slices.Equal(got, seqs[2:]) {
		t.Errorf("after pruning: %v, want %v", got, seqs[2:])
	}
	// Pruning nothing more keeps the mark.
	prune(old.Add(time.Hour))
	view(t, s, func(tx meta.Tx) error {
		if n, err := auditTx(tx).AuditPruned(); n != seqs[1] || err != nil {
			t.Errorf("AuditPruned = %d, %v; want %d", n, err, seqs[1])
		}
		return nil
	})
	// New entries keep counting from where the log was.
	e := meta.AuditEntry{Tool: "later"}
	update(t, s, func(tx meta.Tx) error { return auditTx(tx).AppendAudit(&e) })
	if e.Seq <= seqs[4] {
		t.Errorf("Seq after pruning %d, want above %d", e.Seq, seqs[4])
	}
}
