package hostmount_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/hostmount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConformance(t *testing.T) {
	mounttest.Run(t, func(t *testing.T) (mount.Mount, mounttest.Fixture) {
		files := map[string][]byte{"a.txt": []byte("alpha"), "d/b.txt": []byte("beta"), "d/e/empty": {}}
		dir := t.TempDir()
		writeTree(t, dir, files)
		m, err := hostmount.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m, mounttest.Fixture{Files: files, Writable: true, Preconditions: true}
	})
}

// TestEscapes tries to leave the mounted directory by "..", by symbolic
// links (absolute and relative) and by a hard link to an outside file.
func TestEscapes(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "root")
	writeTree(t, dir, map[string][]byte{"ok.txt": []byte("ok")})
	for name, target := range map[string]string{"abs": secret, "rel": "../../" + filepath.Base(outside) + "/secret"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(secret, filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	m, err := hostmount.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, rel := range []string{"../" + filepath.Base(outside) + "/secret", "abs", "rel", "hard"} {
		if b, err := m.Fetch(ctx, rel); err == nil {
			t.Errorf("fetch %s escaped: %q", rel, b)
		}
	}
	ents, err := m.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Path == "hard" {
			t.Errorf("hard link listed: %+v", e)
		}
	}
	if _, err := m.Put(ctx, "../escape", []byte("x"), ""); err == nil {
		t.Error("put ../escape succeeded")
	}
	if _, err := m.Put(ctx, "hard", []byte("x"), mount.Unconditional); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Errorf("put through a hard link changed the outside file: %q", b)
	}
	if _, err := hostmount.New(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}
