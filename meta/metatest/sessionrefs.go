package metatest

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace/meta"
)

// testSessionRefs: PutSessionRef upserts per (session, name), SessionRef
// finds it (fs.ErrNotExist otherwise), SessionRefs lists one session by
// name, DeleteSessionRef is idempotent, empty keys are fs.ErrInvalid.
func testSessionRefs(t *testing.T, s meta.Store) {
	put := func(session, name, ref string) {
		update(t, s, func(tx meta.Tx) error {
			r := &meta.SessionRef{Session: session, Name: name, Ref: []byte(ref)}
			if err := tx.PutSessionRef(r); err != nil {
				return err
			}
			if r.UpdatedAt.IsZero() {
				t.Errorf("put %s/%s: UpdatedAt not set", session, name)
			}
			return nil
		})
	}
	put("s1", "b", `{"v":1}`)
	put("s1", "a", `{"v":2}`)
	put("s2", "a", `{"v":3}`)
	put("s1", "b", `{"v":4}`)
	view(t, s, func(tx meta.Tx) error {
		r, err := tx.SessionRef("s1", "b")
		if err != nil {
			return err
		}
		if string(r.Ref) != `{"v":4}` || r.Session != "s1" || r.Name != "b" {
			t.Errorf("SessionRef(s1, b) = %+v, want the replaced row", r)
		}
		_, err = tx.SessionRef("s1", "c")
		wantErr(t, "SessionRef of a missing row", err, fs.ErrNotExist)
		rows, err := tx.SessionRefs("s1")
		if err != nil {
			return err
		}
		if len(rows) != 2 || rows[0].Name != "a" || rows[1].Name != "b" || string(rows[0].Ref) != `{"v":2}` {
			t.Errorf("SessionRefs(s1) = %+v, want a then b", rows)
		}
		rows, err = tx.SessionRefs("none")
		if err != nil || len(rows) != 0 {
			t.Errorf("SessionRefs(none) = %v, %v; want nothing", rows, err)
		}
		return nil
	})
	update(t, s, func(tx meta.Tx) error {
		if err := tx.DeleteSessionRef("s1", "b"); err != nil {
			return err
		}
		if err := tx.DeleteSessionRef("s1", "b"); err != nil {
			t.Errorf("second DeleteSessionRef: %v, want nil", err)
		}
		err := tx.PutSessionRef(&meta.SessionRef{Name: "x", Ref: []byte("{}")})
		wantErr(t, "PutSessionRef without session", err, fs.ErrInvalid)
		return nil
	})
	view(t, s, func(tx meta.Tx) error {
		_, err := tx.SessionRef("s1", "b")
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("SessionRef after delete: %v, want fs.ErrNotExist", err)
		}
		r, err := tx.SessionRef("s2", "a")
		if err != nil || string(r.Ref) != `{"v":3}` {
			t.Errorf("SessionRef(s2, a) = %+v, %v; other session changed", r, err)
		}
		return nil
	})
}
