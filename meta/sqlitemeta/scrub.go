package sqlitemeta

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"

	"modernc.org/sqlite"

	"github.com/forkspace/forkspace/internal/urlcreds"
)

// scrubFunc is the SQL name of the function migration 0011 uses to remove
// credentials from persisted mount sources: given a JSON object with a
// "source" string (a mount table row, a mount root's index record) or an
// array of them, it returns the same JSON with each source redacted
// (urlcreds.Redact), as text for text and as a blob for a blob; anything
// else comes back unchanged.
const scrubFunc = "forkspace_scrub_sources"

func registerScrub(d *sqlite.Driver) {
	d.MustRegisterDeterministicScalarFunction(scrubFunc, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			if out, ok := scrubSources([]byte(v)); ok {
				return string(out), nil
			}
		case []byte:
			if out, ok := scrubSources(v); ok {
				return out, nil
			}
		}
		return args[0], nil
	})
}

// scrubSources redacts the "source" members of data; ok is false when
// data is not such JSON or holds no credentials.
func scrubSources(data []byte) (_ []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	changed := false
	scrub := func(x any) {
		obj, isObj := x.(map[string]any)
		if !isObj {
			return
		}
		if src, isStr := obj["source"].(string); isStr {
			if red := urlcreds.Redact(src); red != src && urlcreds.Check(src) != nil {
				obj["source"] = red
				changed = true
			}
		}
	}
	if arr, isArr := v.([]any); isArr {
		for _, x := range arr {
			scrub(x)
		}
	} else {
		scrub(v)
	}
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}
