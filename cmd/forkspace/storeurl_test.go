package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/internal/s3test"
)

// TestS3BlobStore runs commands against --blob s3:// on versitygw with the
// local SQLite metadata: bytes go to the bucket (none to the store
// directory), reads, forks and gc work, gc deletes the bucket's objects it
// reclaims, and the credentials (from the environment) are in no file of
// the store.
func TestS3BlobStore(t *testing.T) {
	v := s3test.StartVersity(t, "forkspace-blobs")
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	t.Setenv("FORKSPACE_BLOB", "s3://forkspace-blobs/team-a?endpoint="+v.URL+"&region="+s3test.Region+"&path_style=true")
	c := newCLI(t)
	big := make([]byte, 3<<20+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(r.Uint32())
	}
	c.ok(nil, "workspace", "create", "a")
	c.ok(big, "-w", "a", "put", "-", "/big")
	c.ok([]byte("small"), "-w", "a", "put", "-", "/small")
	keys := v.Keys(t, "forkspace-blobs", "team-a/")
	if len(keys) == 0 {
		t.Fatal("no object in the bucket after a put of 3 MiB")
	}
	if got := c.ok(nil, "-w", "a", "cat", "/big"); got != string(big) {
		t.Fatalf("cat returned %d bytes, want %d", len(got), len(big))
	}
	c.ok(nil, "workspace", "fork", "a", "b")
	c.ok(nil, "-w", "b", "rm", "/big")
	if got := c.ok(nil, "-w", "a", "cat", "/big"); got != string(big) {
		t.Fatal("cat after the fork's rm differs")
	}
	var res httpapi.GCResult
	c.json(&res, "gc", "--grace", "0s")
	if res.Reclaimed.Blobs != 0 {
		t.Fatalf("gc reclaimed blobs a still uses: %+v", res)
	}
	if got := c.ok(nil, "-w", "b", "cat", "/small"); got != "small" {
		t.Fatalf("cat /small in b = %q", got)
	}
	// b's history still holds /big until b goes too.
	c.ok(nil, "workspace", "delete", "a")
	c.ok(nil, "workspace", "delete", "b")
	c.json(&res, "gc", "--grace", "0s")
	if res.Reclaimed.Blobs != int64(len(keys)) {
		t.Fatalf("gc reclaimed %d blobs, want the %d in the bucket", res.Reclaimed.Blobs, len(keys))
	}
	if left := v.Keys(t, "forkspace-blobs", "team-a/"); len(left) != 0 {
		t.Fatalf("%d objects left in the bucket after gc", len(left))
	}
	blobs, _ := os.ReadDir(filepath.Join(c.store, "blobs"))
	for _, e := range blobs {
		if e.Name() != "tmp" {
			t.Errorf("the store directory holds blobs/%s: bytes went to the local store", e.Name())
		}
	}
	assertNoSecret(t, c.store, s3test.SecretKey)
}

// TestCredentialsInURLs: a store URL or a mount URL carrying credentials,
// anywhere, is refused with a message saying to use the environment; it
// neither echoes nor stores the secret.
func TestCredentialsInURLs(t *testing.T) {
	c := newCLI(t)
	const secret = "S3CR3T-in-the-url"
	for _, raw := range []string{
		"s3://b/p?endpoint=http://AKID:" + secret + "@127.0.0.1:9",
		"s3://AKID:" + secret + "@b/p",
		"s3://b/p?secret_access_key=" + secret,
	} {
		msg := c.fails(exitUsage, nil, "--blob", raw, "workspace", "ls")
		if !strings.Contains(msg, "environment") || strings.Contains(msg, secret) {
			t.Errorf("--blob %s: %q", raw, msg)
		}
		msg = c.fails(exitInvalid, nil, "workspace", "create", "m", "--mount", "/data="+raw+"&mode=rw")
		if !strings.Contains(msg, "environment") || strings.Contains(msg, secret) {
			t.Errorf("--mount %s: %q", raw, msg)
		}
	}
	c.fails(exitNotFound, nil, "-w", "m", "ls")
	assertNoSecret(t, c.store, secret)
}

// assertNoSecret fails if any file under dir holds secret.
func assertNoSecret(t *testing.T, dir, secret string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBlobStoreRecorded: a store remembers where its blobs are and refuses
// to be opened over another blob store (its reads would find every chunk
// missing and gc would delete the other store's blobs as garbage).
func TestBlobStoreRecorded(t *testing.T) {
	c := newCLI(t)
	s3 := "--blob=s3://b/p?endpoint=http://127.0.0.1:9"
	c.ok(nil, "workspace", "create", "a")
	if msg := c.fails(exitInvalid, nil, s3, "workspace", "ls"); !strings.Contains(msg, "no --blob") {
		t.Errorf("local store opened over s3: %q", msg)
	}
	other := filepath.Join(t.TempDir(), "other")
	c.ok(nil, "--store", other, s3, "init")
	if msg := c.fails(exitInvalid, nil, "--store", other, "workspace", "ls"); !strings.Contains(msg, "--blob s3://b/p") {
		t.Errorf("s3 store opened over local blobs: %q", msg)
	}
	if msg := c.fails(exitInvalid, nil, "--store", other, "--blob=s3://b/q?endpoint=http://127.0.0.1:9", "workspace", "ls"); !strings.Contains(msg, "--blob s3://b/p") {
		t.Errorf("s3 store opened over another prefix: %q", msg)
	}
	c.ok(nil, "--store", other, s3, "workspace", "ls")
}

// TestS3BlobDamage: an object of the bucket that a file needs, flipped or
// deleted behind the store's back, makes cat and fsck exit 9 (corrupt),
// naming the workspace path and never returning wrong bytes.
func TestS3BlobDamage(t *testing.T) {
	v := s3test.StartVersity(t, "forkspace-blobs")
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	t.Setenv("FORKSPACE_BLOB", "s3://forkspace-blobs/d?endpoint="+v.URL+"&region="+s3test.Region+"&path_style=true")
	c := newCLI(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB: one chunk
	c.ok(nil, "workspace", "create", "a")
	c.ok(nil, "-w", "a", "mkdir", "/dir")
	c.ok(data, "-w", "a", "put", "-", "/dir/f")
	keys := v.Keys(t, "forkspace-blobs", "d/")
	if len(keys) != 1 {
		t.Fatalf("bucket holds %v, want one object", keys)
	}
	obj, _ := v.Object(t, "forkspace-blobs", keys[0])
	obj[len(obj)/2] ^= 1
	v.Seed(t, "forkspace-blobs", keys[0], obj)
	out, errs, code := c.run(nil, "-w", "a", "cat", "/dir/f")
	if code != exitCorrupt || out != "" || !strings.Contains(errs, "dir/f") {
		t.Fatalf("cat of a flipped object: exit %d, %d bytes, %q", code, len(out), errs)
	}
	c.fails(exitCorrupt, nil, "fsck")
	v.Remove(t, "forkspace-blobs", keys[0])
	out, errs, code = c.run(nil, "-w", "a", "cat", "/dir/f")
	if code != exitCorrupt || out != "" || !strings.Contains(errs, "dir/f") || !strings.Contains(errs, "missing from the store") {
		t.Fatalf("cat of a deleted object: exit %d, %d bytes, %q", code, len(out), errs)
	}
	c.fails(exitCorrupt, nil, "fsck")
}
