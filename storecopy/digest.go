package storecopy

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/zeebo/blake3"
)

// digester sums one table's rows in order: each row's canonical JSON,
// length-prefixed.
type digester struct {
	h    *blake3.Hasher
	rows int64
	err  error
}

func newDigester() *digester { return &digester{h: blake3.New()} }

func (d *digester) add(row any) {
	b, err := json.Marshal(row)
	if err != nil && d.err == nil {
		d.err = err
	}
	fmt.Fprintf(d.h, "%d:", len(b))
	d.h.Write(b)
	d.rows++
}

func (d *digester) table() (Table, error) {
	return Table{Rows: d.rows, Digest: hex.EncodeToString(d.h.Sum(nil))}, d.err
}

// digestRows sums rows into a table.
func digestRows[T any](rows []T) (Table, error) {
	d := newDigester()
	for _, r := range rows {
		d.add(r)
	}
	return d.table()
}

// tables digests every table of the catalog.
func (cat *catalog) tables() (map[string]Table, error) {
	type kv struct {
		K string
		V any
	}
	pairs := func(m map[string]any) []kv {
		var out []kv
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, kv{k, m[k]})
		}
		return out
	}
	settings, counters := map[string]any{}, map[string]any{}
	for k, v := range cat.settings {
		settings[k] = v
	}
	for k, v := range cat.counters {
		counters[k] = v
	}
	type keyed struct {
		Of  string
		Row any
	}
	var stagingRows, cpRows, stateRows []keyed
	for _, id := range sortedKeys(cat.staging) {
		for _, r := range cat.staging[id] {
			stagingRows = append(stagingRows, keyed{id, r})
		}
	}
	for _, id := range sortedKeys(cat.cpStaging) {
		for _, r := range cat.cpStaging[id] {
			cpRows = append(cpRows, keyed{id, r})
		}
	}
	states := make([]any, len(cat.states))
	for i, s := range cat.states {
		states[i] = s.State
		for _, r := range s.rows {
			stateRows = append(stateRows, keyed{fmt.Sprint(s.Seq), r})
		}
	}
	out := map[string]Table{}
	var errs []error
	for name, rows := range map[string]func() (Table, error){
		"settings":           func() (Table, error) { return digestRows(pairs(settings)) },
		"counters":           func() (Table, error) { return digestRows(pairs(counters)) },
		"tenants":            func() (Table, error) { return digestRows(cat.tenants) },
		"workspaces":         func() (Table, error) { return digestRows(cat.workspaces) },
		"staging":            func() (Table, error) { return digestRows(stagingRows) },
		"checkpoints":        func() (Table, error) { return digestRows(cat.checkpoints) },
		"checkpoint_staging": func() (Table, error) { return digestRows(cpRows) },
		"states":             func() (Table, error) { return digestRows(states) },
		"state_staging":      func() (Table, error) { return digestRows(stateRows) },
		"audit_log":          func() (Table, error) { return digestRows(cat.audit) },
		"merge_conflicts":    func() (Table, error) { return digestRows(cat.conflicts) },
		"tokens":             func() (Table, error) { return digestRows(cat.tokens) },
		"session_refs":       func() (Table, error) { return digestRows(cat.refs) },
	} {
		t, err := rows()
		out[name] = t
		errs = append(errs, err)
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
