package meta_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"pgregory.net/rapid"
)

// TestDeltaRoundTrip: any rows read back as written, an empty value as
// nil, and every proper prefix of an encoding is refused or reads as a
// prefix of the rows (a record is never cut short silently).
func TestDeltaRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rows := rapid.SliceOf(rapid.Custom(func(t *rapid.T) meta.Staged {
			r := meta.Staged{
				Key:     rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "key"),
				Deleted: rapid.Bool().Draw(t, "deleted"),
				Seq:     rapid.Int64().Draw(t, "seq"),
			}
			if v := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "value"); len(v) > 0 {
				r.Value = v
			}
			return r
		})).Draw(t, "rows")
		b := meta.AppendDelta([]byte("prefix"), rows)
		if !bytes.HasPrefix(b, []byte("prefix")) {
			t.Fatal("AppendDelta dropped what dst held")
		}
		got := parse(t, b[len("prefix"):])
		if len(got) != len(rows) {
			t.Fatalf("%d rows read, %d written", len(got), len(rows))
		}
		for i := range rows {
			if !equalRow(got[i], rows[i]) {
				t.Fatalf("row %d: %+v, want %+v", i, got[i], rows[i])
			}
		}
		cut := rapid.IntRange(0, len(b)-len("prefix")).Draw(t, "cut")
		var n int
		err := meta.ParseDelta(b[len("prefix"):len("prefix")+cut], func(r meta.Staged) error {
			if !equalRow(r, rows[n]) {
				t.Fatalf("row %d of a cut record: %+v, want %+v", n, r, rows[n])
			}
			n++
			return nil
		})
		if err != nil && !errors.Is(err, errdefs.ErrCorrupt) {
			t.Fatalf("cut record: %v, want ErrCorrupt", err)
		}
	})
}

func parse(t interface{ Fatal(...any) }, b []byte) []meta.Staged {
	var out []meta.Staged
	if err := meta.ParseDelta(b, func(r meta.Staged) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func equalRow(a, b meta.Staged) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && (a.Value == nil) == (b.Value == nil) &&
		a.Deleted == b.Deleted && a.Seq == b.Seq
}

// FuzzParseDelta: no input makes ParseDelta panic or fail with anything
// but ErrCorrupt, and the rows of whatever it accepts encode to a delta
// that reads back as the same rows.
func FuzzParseDelta(f *testing.F) {
	f.Add(meta.AppendDelta(nil, []meta.Staged{{Key: []byte("k"), Value: []byte("v"), Seq: 3}, {Key: []byte("d"), Deleted: true, Seq: -1}}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var rows []meta.Staged
		err := meta.ParseDelta(b, func(r meta.Staged) error { rows = append(rows, r); return nil })
		if err != nil {
			if !errors.Is(err, errdefs.ErrCorrupt) {
				t.Fatalf("%v, want ErrCorrupt", err)
			}
			return
		}
		again := parse(t, meta.AppendDelta(nil, rows))
		if len(again) != len(rows) {
			t.Fatalf("%d rows re-read, %d parsed", len(again), len(rows))
		}
		for i := range rows {
			if !equalRow(again[i], rows[i]) {
				t.Fatalf("row %d re-read as %+v, parsed as %+v", i, again[i], rows[i])
			}
		}
	})
}
