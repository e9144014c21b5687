package sqlitemeta_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/forkspace/forkspace/meta"
)

// FuzzStaged stores two staging rows with arbitrary keys and values and
// reads them back: bytes survive exactly and rows come back in bytewise key
// order (SQLite compares BLOBs with memcmp, whatever the encoding).
func FuzzStaged(f *testing.F) {
	seeds := []struct{ k1, v1, k2, v2 []byte }{
		{[]byte("a"), []byte("1"), []byte("b"), []byte("2")},
		{[]byte("a"), nil, []byte("a\x00"), []byte{0}},
		{[]byte("\xff\xfe"), []byte("\x00\x00"), []byte("\x80"), []byte("x")},
		{[]byte(""), []byte("empty key"), []byte("Z"), []byte("é")},
		{[]byte("same"), []byte("first"), []byte("same"), []byte("second")},
	}
	for _, s := range seeds {
		f.Add(s.k1, s.v1, s.k2, s.v2)
	}
	s := openTemp(f)
	ctx := context.Background()
	if err := s.Update(ctx, func(tx meta.Tx) error {
		return tx.CreateWorkspace(&meta.Workspace{ID: "id-fuzz", Name: "fuzz"})
	}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 []byte) {
		in := []meta.Staged{{Key: k1, Value: v1, Seq: 1}, {Key: k2, Value: v2, Seq: 2}}
		var got []meta.Staged
		err := s.Update(ctx, func(tx meta.Tx) (err error) {
			if err := tx.DeleteStaged("id-fuzz", 2); err != nil {
				return err
			}
			if err := tx.PutStaged("id-fuzz", in); err != nil {
				return err
			}
			got, err = tx.Staged("id-fuzz")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := in
		switch c := bytes.Compare(k1, k2); {
		case c == 0:
			want = in[1:] // the later row replaced the earlier one
		case c > 0:
			want = []meta.Staged{in[1], in[0]}
		}
		if len(got) != len(want) {
			t.Fatalf("got %d rows, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Value, want[i].Value) || got[i].Seq != want[i].Seq {
				t.Fatalf("row %d = %q=%q seq %d, want %q=%q seq %d", i,
					got[i].Key, got[i].Value, got[i].Seq, want[i].Key, want[i].Value, want[i].Seq)
			}
		}
	})
}
