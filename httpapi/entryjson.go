package httpapi

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Directory pages are encoded by hand: encoding/json spent most of a
// page of a thousand entries on reflection and on re-validating the
// output of time.Time's MarshalJSON, three times per entry. The bytes
// are those encoding/json writes (TestEntryJSONMatchesEncodingJSON).

// appendDirPage appends p as JSON.
func appendDirPage(b []byte, p DirPage) ([]byte, error) {
	b = append(b, `{"entries":`...)
	b = slices.Grow(b, 300*len(p.Entries)) // about an entry's size
	if p.Entries == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range p.Entries {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendEntry(b, e); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if p.Next != "" {
		b = appendString(append(b, `,"next":`...), p.Next)
	}
	return append(b, '}'), nil
}

// appendEntry appends e as JSON.
func appendEntry(b []byte, e Entry) ([]byte, error) {
	b = appendString(append(b, `{"name":`...), e.Name)
	b = appendString(append(b, `,"path":`...), e.Path)
	b = appendString(append(b, `,"type":`...), e.Type)
	b = appendString(append(b, `,"mode":`...), e.Mode)
	b = strconv.AppendInt(append(b, `,"size":`...), e.Size, 10)
	for _, t := range []struct {
		key string
		t   time.Time
	}{{`,"mtime":`, e.Mtime}, {`,"atime":`, e.Atime}, {`,"ctime":`, e.Ctime}} {
		var err error
		if b, err = appendTime(append(b, t.key...), t.t); err != nil {
			return nil, err
		}
	}
	b = strconv.AppendUint(append(b, `,"ino":`...), e.Ino, 10)
	b = strconv.AppendUint(append(b, `,"nlink":`...), uint64(e.Nlink), 10)
	b = strconv.AppendUint(append(b, `,"uid":`...), uint64(e.UID), 10)
	b = strconv.AppendUint(append(b, `,"gid":`...), uint64(e.GID), 10)
	if e.Target != "" {
		b = appendString(append(b, `,"target":`...), e.Target)
	}
	if e.ETag != "" {
		b = appendString(append(b, `,"etag":`...), e.ETag)
	}
	return append(b, '}'), nil
}

// appendTime appends t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds; a year it cannot write is an error).
func appendTime(b []byte, t time.Time) ([]byte, error) {
	b, err := t.AppendText(append(b, '"'))
	return append(b, '"'), err
}

// appendString appends s as a JSON string: by hand when every byte is
// printable ASCII (escaping '"' and '\\' as encoding/json does), through
// encoding/json otherwise (control characters, HTML-safe <, > and &,
// UTF-8 checks).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
