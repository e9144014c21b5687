package vfs

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/forkspace/forkspace/blob/memblob"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
)

// openTestFS returns a live FS over SQLite and memblob.
func openTestFS(t *testing.T) *FS {
	t.Helper()
	ctx := context.Background()
	m, err := sqlitemeta.Open(ctx, filepath.Join(t.TempDir(), "meta.db"), sqlitemeta.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	d := Deps{Meta: m, KV: kv.New(m, kv.Options{})}
	d.Content = content.New(content.Options{Blobs: memblob.New(), Meta: m, Params: chunk.DefaultParams})
	root, nodes, err := NewTree(ctx, d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ws := &meta.Workspace{ID: "w", Name: "w", Root: root}
	err = m.Update(ctx, func(tx meta.Tx) error {
		objs := make([]meta.Object, len(nodes))
		for i, n := range nodes {
			objs[i] = meta.Object{Hash: n.Hash, Data: n.Data}
		}
		if err := tx.PutNodes(objs); err != nil {
			return err
		}
		return tx.CreateWorkspace(ws)
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(ctx, d, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCheckFindsDamage stages damaged records behind the API's back and
// expects Check to report each.
func TestCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	tests := map[string]func(t *txn, file uint64){
		"dangling entry": func(t *txn, _ uint64) {
			t.set(inoKey(rootIno, kindDirent, "ghost"), encodeDirent(999999, typeFile))
		},
		"orphan inode": func(t *txn, file uint64) {
			t.del(inoKey(rootIno, kindDirent, "f"))
		},
		"wrong nlink": func(t *txn, file uint64) {
			a, _ := t.attr(ctx, file)
			a.nlink = 3
			t.putAttr(file, &a)
		},
		"wrong usage": func(t *txn, _ uint64) {
			t.set(usageKey, encodeUsage(Usage{Bytes: 1}))
		},
		"bad attributes": func(t *txn, file uint64) {
			t.set(inoKey(file, kindAttr, ""), []byte{9, 9})
		},
		"stray link record": func(t *txn, file uint64) {
			t.set(backlinkKey(file, rootIno, "nowhere"), backlinkValue)
		},
		"directory nlink": func(t *txn, _ uint64) {
			a, _ := t.attr(ctx, rootIno)
			a.nlink = 7
			t.putAttr(rootIno, &a)
		},
	}
	for name, damage := range tests {
		t.Run(name, func(t *testing.T) {
			f := openTestFS(t)
			if err := f.WriteFile(ctx, "f", []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := f.Check(ctx); err != nil {
				t.Fatalf("healthy state: %v", err)
			}
			fi, err := f.Stat(ctx, "f")
			if err != nil {
				t.Fatal(err)
			}
			ino := fi.Sys().(*Attr).Ino
			err = f.update(ctx, "damage", ".", func(t *txn) error {
				damage(t, ino)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Check(ctx); !errors.Is(err, errdefs.ErrCorrupt) {
				t.Fatalf("Check = %v, want ErrCorrupt", err)
			}
		})
	}
}
