package sandbox

import (
	"errors"
	"reflect"
	"testing"

	"github.com/forkspace/forkspace/cas"
)

// TestSavedRoundTrip: a saved manifest decodes to what was encoded
// (negative times, racy entries, links, pending subtrees), and every
// prefix of it, or a different version, is refused with errSaved.
func TestSavedRoundTrip(t *testing.T) {
	sv := &saved{token: "t0k3n", synced: cas.Sum([]byte("root")), pending: map[string]bool{"a": true, "b/c": false},
		man: manifest{
			".":    {kind: kindDir, perm: 0o755, hostIno: 2, hostCtime: 5, wsIno: 1, wsCtime: 7},
			"f":    {kind: kindFile, perm: 0o640, size: 12, mtime: -1_000_000_007, hash: cas.Sum([]byte("f")), hostIno: 9, hostCtime: 1 << 62, racy: true, wsIno: 3, wsCtime: -4},
			"d/ln": {kind: kindSymlink, perm: 0o777, target: "../f", hostIno: 10},
		}}
	b := sv.encode()
	got, err := decodeSaved(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sv) {
		t.Errorf("decoded %+v, want %+v", got, sv)
	}
	for n := range len(b) {
		if _, err := decodeSaved(b[:n]); !errors.Is(err, errSaved) {
			t.Fatalf("decoding %d of %d bytes: %v, want errSaved", n, len(b), err)
		}
	}
	if _, err := decodeSaved(append([]byte("forkspace-manifest-0\n"), b[len(savedMagic):]...)); !errors.Is(err, errSaved) {
		t.Errorf("another version: %v, want errSaved", err)
	}
}
