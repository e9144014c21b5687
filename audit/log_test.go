package audit_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/memmeta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
)

func TestLog(t *testing.T) {
	stores := map[string]func(t *testing.T) meta.Store{
		"sqlite": func(t *testing.T) meta.Store {
			s, err := sqlitemeta.Open(t.Context(), filepath.Join(t.TempDir(), "meta.db"), sqlitemeta.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"memory": func(*testing.T) meta.Store { return memmeta.New() },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			log := audit.NewLog(open(t))
			ctx := audit.WithActor(t.Context(), audit.Actor{Name: "agent", Session: "s1"})
			write := func(ctx context.Context, path string, err error) error {
				return audit.Run(ctx, log, audit.Call{WorkspaceID: "ws", Tool: "write", Args: map[string]string{"path": path, "content": "secret"}},
					func(context.Context) ([]string, error) { return []string{path}, err })
			}
			if err := write(ctx, "a", nil); err != nil {
				t.Fatal(err)
			}
			boom := errors.New("disk on fire")
			if err := write(audit.WithActor(ctx, audit.Actor{Name: "other", Session: "s2"}), "b", boom); !errors.Is(err, boom) {
				t.Fatalf("Run = %v", err)
			}
			all, err := log.Entries(ctx, audit.Filter{})
			if err != nil || len(all) != 2 {
				t.Fatalf("Entries = %v, %v", all, err)
			}
			if all[0].Tool != "write" || all[0].Error != boom.Error() || all[0].Session != "s2" || !slices.Equal(all[0].Changed, []string{"b"}) {
				t.Errorf("newest entry = %+v", all[0])
			}
			if all[1].Error != "" || all[1].Actor != "agent" || all[1].ArgsDigest == "" || all[1].Seq >= all[0].Seq {
				t.Errorf("oldest entry = %+v", all[1])
			}
			s1, err := log.Entries(ctx, audit.Filter{Session: "s1"})
			if err != nil || len(s1) != 1 || s1[0].Seq != all[1].Seq {
				t.Errorf("Entries(session s1) = %v, %v", s1, err)
			}
		})
	}
}

// TestCommit: an entry appended in the transaction of a call's mutation
// (Commit) is recorded once and heard once; when that transaction fails,
// Run records the failure itself.
func TestCommit(t *testing.T) {
	m, err := sqlitemeta.Open(t.Context(), filepath.Join(t.TempDir(), "meta.db"), sqlitemeta.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	log := audit.NewLog(m)
	var heard []audit.Entry
	log.OnRecord(func(e audit.Entry) { heard = append(heard, e) })
	ctx := t.Context()
	if fn, done := audit.Commit(ctx, []string{"x"}); fn != nil || done != nil {
		t.Fatal("Commit outside Run returned work")
	}
	boom := errors.New("boom")
	// mutation commits fn in a transaction of its own, failing with fail
	// after fn ran.
	mutation := func(ctx context.Context, fail error) error {
		fn, done := audit.Commit(ctx, []string{"a"})
		if fn == nil {
			t.Fatal("Commit inside Run returned no work")
		}
		if again, _ := audit.Commit(ctx, []string{"a"}); again != nil {
			t.Error("a second Commit in one Run returned work")
		}
		err := m.Update(ctx, func(tx meta.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return fail
		})
		if err == nil {
			done()
		}
		return err
	}
	run := func(fail, after error) error {
		return audit.Run(ctx, log, audit.Call{WorkspaceID: "ws", Tool: "write"}, func(ctx context.Context) ([]string, error) {
			if err := mutation(ctx, fail); err != nil {
				return []string{"a"}, err
			}
			return []string{"a"}, after
		})
	}
	check := func(name string, want ...string) {
		t.Helper()
		es, err := log.Entries(ctx, audit.Filter{Ascending: true})
		if err != nil {
			t.Fatal(err)
		}
		var got, got2 []string
		for _, e := range es {
			got = append(got, e.Error)
			if !slices.Equal(e.Changed, []string{"a"}) {
				t.Errorf("%s: entry %d changed %v", name, e.Seq, e.Changed)
			}
		}
		for _, e := range heard {
			got2 = append(got2, e.Error)
		}
		if !slices.Equal(got, want) || !slices.Equal(got2, want) {
			t.Errorf("%s: entries' errors %q, heard %q; want %q", name, got, got2, want)
		}
	}
	if err := run(nil, nil); err != nil {
		t.Fatal(err)
	}
	check("committed with the mutation", "")
	if err := run(boom, nil); !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want %v", err, boom)
	}
	check("the mutation failed", "", "boom")
	if err := run(nil, boom); !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want %v", err, boom)
	}
	check("failed after the mutation", "", "boom", "", "boom")
}
