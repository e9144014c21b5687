package content

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestDirtyLogModes appends to a flat log past flatBytes (it becomes a
// log of blocks), to a log that spills, and with appendFill, whose
// failure leaves the log as it was; every byte reads back.
func TestDirtyLogModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bytesOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	errFill := errors.New("fill failed")
	for _, mode := range []string{"flat", "blocks", "spilled"} {
		t.Run(mode, func(t *testing.T) {
			l := dirtyLog{limit: 1 << 40}
			switch mode {
			case "flat":
				l.flat = flatPool.Get().(*[flatBytes]byte)
			case "spilled":
				l.limit = 3 << 20
			}
			defer l.reset()
			var model []byte
			for len(model) < flatBytes+(5<<20) {
				p := bytesOf(rng.IntN(3<<20) + 1)
				var off int64
				var err error
				if rng.IntN(2) == 0 {
					off, err = l.append(p)
				} else {
					off, err = l.appendFill(int64(len(p)), func(b []byte, at int64) error {
						copy(b, p[at:])
						return nil
					})
				}
				if err != nil || off != int64(len(model)) {
					t.Fatalf("append at %d: offset %d, %v", len(model), off, err)
				}
				model = append(model, p...)
				// A fill that fails part way changes nothing.
				_, err = l.appendFill(int64(len(p)), func(b []byte, at int64) error {
					if at > 0 || len(b) < len(p) {
						return errFill
					}
					copy(b, p)
					return errFill
				})
				if !errors.Is(err, errFill) || l.size != int64(len(model)) {
					t.Fatalf("failed fill: %v, log size %d, want %d", err, l.size, len(model))
				}
			}
			if mode == "flat" && l.flat != nil {
				t.Fatal("still flat past flatBytes")
			}
			if mode == "spilled" && l.file == nil {
				t.Fatal("not spilled past the limit")
			}
			got := make([]byte, len(model))
			if err := l.readAt(got, 0); err != nil || !bytes.Equal(got, model) {
				t.Fatalf("log reads back other bytes (%v)", err)
			}
		})
	}
}
