package sqlitemeta_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
)

var _ kv.BatchSource = (*sqlitemeta.Store)(nil)

// TestGetNodes reads nodes in batches: more than one query's worth, a
// hash asked twice, missing hashes skipped, each node once with its bytes;
// after Close it fails with fs.ErrClosed.
func TestGetNodes(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	want := map[cas.Hash]string{}
	var objs []meta.Object
	for i := range 150 {
		data := fmt.Sprintf("node %d", i)
		h := cas.Sum([]byte(data))
		want[h] = data
		objs = append(objs, meta.Object{Hash: h, Data: []byte(data)})
	}
	if err := s.Update(ctx, func(tx meta.Tx) error { return tx.PutNodes(objs) }); err != nil {
		t.Fatal(err)
	}
	var ask []cas.Hash
	for h := range want {
		ask = append(ask, h, cas.Sum([]byte("missing "+want[h])))
	}
	ask = append(ask, ask[0]) // twice, in another batch
	got := map[cas.Hash]string{}
	reads := 0
	err := s.GetNodes(ctx, ask, func(h cas.Hash, data []byte) error {
		reads++
		got[h] = string(data)
		return nil
	})
	if err != nil || len(got) != len(want) || reads != len(want)+1 {
		t.Fatalf("GetNodes: %d nodes in %d calls, want %d: %v", len(got), reads, len(want), err)
	}
	for h, data := range want {
		if got[h] != data {
			t.Fatalf("node %s: %q, want %q", h.Short(), got[h], data)
		}
	}
	stop := errors.New("stop")
	if err := s.GetNodes(ctx, ask, func(cas.Hash, []byte) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("GetNodes with a failing callback: %v", err)
	}
	if err := s.GetNodes(ctx, nil, func(cas.Hash, []byte) error { return stop }); err != nil {
		t.Fatalf("GetNodes of nothing: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.GetNodes(ctx, ask, func(cas.Hash, []byte) error { return nil }); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("GetNodes after Close: %v", err)
	}
}
