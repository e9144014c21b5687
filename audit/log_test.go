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
