package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestEntryJSONMatchesEncodingJSON: a directory page encoded by hand is
// byte for byte what encoding/json writes, for any names (escapes,
// HTML characters, invalid UTF-8, U+2028), times (zones, nanoseconds,
// years json cannot write) and numbers.
func TestEntryJSONMatchesEncodingJSON(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.StringOf(rapid.RuneFrom([]rune("aZ09._-/ \"\\<>&\n\t\x00\x7f\u2028é€"))),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }))
	tm := rapid.Custom(func(t *rapid.T) time.Time {
		zone := time.FixedZone("z", rapid.IntRange(-14*3600, 14*3600).Draw(t, "offset"))
		return time.Unix(rapid.Int64Range(-70000000000, 300000000000).Draw(t, "sec"), rapid.Int64Range(0, 999999999).Draw(t, "nsec")).In(zone)
	})
	entry := rapid.Custom(func(t *rapid.T) Entry {
		return Entry{Name: str.Draw(t, "name"), Path: str.Draw(t, "path"), Type: str.Draw(t, "type"), Mode: str.Draw(t, "mode"),
			Size: rapid.Int64().Draw(t, "size"), Mtime: tm.Draw(t, "mtime"), Atime: tm.Draw(t, "atime"), Ctime: tm.Draw(t, "ctime"),
			Ino: rapid.Uint64().Draw(t, "ino"), Nlink: rapid.Uint32().Draw(t, "nlink"), UID: rapid.Uint32().Draw(t, "uid"), GID: rapid.Uint32().Draw(t, "gid"),
			Target: rapid.OneOf(rapid.Just(""), str).Draw(t, "target"), ETag: rapid.OneOf(rapid.Just(""), str).Draw(t, "etag")}
	})
	rapid.Check(t, func(t *rapid.T) {
		p := DirPage{Entries: rapid.OneOf(rapid.Just([]Entry(nil)), rapid.SliceOf(entry)).Draw(t, "entries"), Next: rapid.OneOf(rapid.Just(""), str).Draw(t, "next")}
		want, werr := json.Marshal(p)
		got, gerr := appendDirPage(nil, p)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("errors differ: encoding/json %v, by hand %v", werr, gerr)
		}
		if werr == nil && string(got) != string(want) {
			t.Fatalf("by hand\n%s\nencoding/json\n%s", got, want)
		}
	})
}

// TestOctal4: every permission and special bit set as fmt's %04o.
func TestOctal4(t *testing.T) {
	for m := range uint32(0o10000) {
		if got, want := octal4(m), fmt.Sprintf("%04o", m); got != want {
			t.Fatalf("octal4(%o) = %s, want %s", m, got, want)
		}
	}
}
