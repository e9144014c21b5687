package storecopy_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/blob/s3blob"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3client"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/meta/pgmeta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/storecopy"
	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var quiet = slog.New(slog.DiscardHandler)

// localSide opens the drivers of a store directory (meta.db, blobs/).
func localSide(t testing.TB, dir string) storecopy.Side {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m, err := sqlitemeta.Open(ctx, filepath.Join(dir, "meta.db"), sqlitemeta.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	b, err := fileblob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return storecopy.Side{Meta: m, Blobs: b, Name: dir, BlobLocation: "local"}
}

// remote is a PostgreSQL database and a prefix of a versitygw bucket.
type remote struct {
	url    string
	v      *s3test.Versity
	bucket string
	prefix string
}

func newRemote(t testing.TB, v *s3test.Versity, bucket, prefix string) remote {
	return remote{url: pgtest.DB(t), v: v, bucket: bucket, prefix: prefix}
}

func (r remote) blobs(t testing.TB) *s3blob.Store {
	t.Helper()
	b, err := s3blob.Open(s3blob.Options{
		Bucket: r.bucket, Prefix: r.prefix, Endpoint: r.v.URL, PathStyle: true, Region: s3test.Region,
		Credentials: &s3client.Credentials{AccessKeyID: s3test.AccessKey, SecretAccessKey: s3test.SecretKey},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// side opens the remote's drivers.
func (r remote) side(t testing.TB) storecopy.Side {
	t.Helper()
	m, err := pgmeta.Open(context.Background(), r.url, pgmeta.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	b := r.blobs(t)
	return storecopy.Side{Meta: m, Blobs: b, Name: "pg+" + b.Location(), BlobLocation: b.Location()}
}

// sharedSide opens the remote's drivers for a store several processes
// share.
func (r remote) sharedSide(t testing.TB) storecopy.Side {
	t.Helper()
	m, err := pgmeta.Open(context.Background(), r.url, pgmeta.Options{Logger: quiet, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	b := r.blobs(t)
	return storecopy.Side{Meta: m, Blobs: b, Name: "pg+" + b.Location(), BlobLocation: b.Location()}
}

// open opens the remote as a forkspace store.
func (r remote) open(t testing.TB) *forkspace.Store {
	t.Helper()
	s := r.side(t)
	st, err := forkspace.Open(context.Background(), forkspace.Options{Meta: s.Meta, Blobs: s.Blobs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func closeSide(t testing.TB, s storecopy.Side) {
	t.Helper()
	if err := s.Meta.Close(); err != nil {
		t.Error(err)
	}
	if err := s.Blobs.Close(); err != nil {
		t.Error(err)
	}
}

func openLocal(t testing.TB, dir string) *forkspace.Store {
	t.Helper()
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func random(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// fill writes a store worth copying: workspaces with inline files and
// blobs, directories and a symlink, checkpoints, forks of forks, audited
// calls (history and audit log), a merge with a conflict, a second
// tenant and a token.
func fill(t testing.TB, st *forkspace.Store) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	a, err := st.Create(ctx, "A", forkspace.CreateOptions{})
	must(err)
	must(a.WriteFile(ctx, "small.txt", []byte("small\n"), 0o644))
	must(a.MkdirAll(ctx, "dir/sub", 0o755))
	must(a.WriteFile(ctx, "dir/sub/big.bin", random(1, 300<<10), 0o600))
	must(a.Symlink(ctx, "dir/sub/big.bin", "link"))
	_, err = a.Checkpoint(ctx, "v1")
	must(err)
	must(a.WriteFile(ctx, "merge.txt", []byte("base\n"), 0o644))
	b, err := a.Fork(ctx, "B", forkspace.ForkOptions{})
	must(err)
	must(b.WriteFile(ctx, "b.bin", random(2, 64<<10), 0o644))
	must(b.WriteFile(ctx, "merge.txt", []byte("from b\n"), 0o644))
	aud, err := st.Audited(ctx, "B", forkspace.AuditOptions{AutoCheckpoint: true})
	must(err)
	for i := range 5 {
		must(aud.WriteFile(ctx, fmt.Sprintf("audited-%d.txt", i), []byte(fmt.Sprint("step ", i)), 0o644))
	}
	c, err := b.Fork(ctx, "C", forkspace.ForkOptions{})
	must(err)
	must(c.WriteFile(ctx, "c.txt", random(3, 100), 0o644))
	must(c.Remove(ctx, "small.txt"))
	_, err = c.Checkpoint(ctx, "c1")
	must(err)
	must(a.WriteFile(ctx, "merge.txt", []byte("from a\n"), 0o644))
	_, err = a.Merge(ctx, "B", forkspace.MergeOptions{})
	must(err)
	_, err = st.Create(forkspace.WithTenant(ctx, "other"), "T", forkspace.CreateOptions{})
	must(err)
	tokens, err := st.Tokens(ctx)
	must(err)
	_, err = tokens.Create(ctx, nil, auth.Request{Workspaces: "A*", Perms: auth.Read, Label: "reader"})
	must(err)
}

// settled closes st and returns the store open opens again: the history
// records library changes a few milliseconds after them, in the
// background, and Close waits for that, so the reopened store's history
// holds every step fill took.
func settled(t testing.TB, st *forkspace.Store, open func() *forkspace.Store) *forkspace.Store {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return open()
}

// describe renders everything a user can read of a store: each
// workspace's files (a tar of every head and checkpoint, times and
// modes included), its checkpoints, history, conflicts and the token
// list, as one JSON document.
func describe(t testing.TB, st *forkspace.Store) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, tenant := range []string{"default", "other"} {
		describeTenant(t, st, tenant, out)
	}
	tokens, err := st.Tokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	infos, err := tokens.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out["tokens"] = infos
	return out
}

func describeTenant(t testing.TB, st *forkspace.Store, tenant string, out map[string]any) {
	ctx := forkspace.WithTenant(context.Background(), tenant)
	list, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range list {
		describeWorkspace(t, st, ctx, info.Name, out)
	}
}

// describeWorkspace adds workspace name's files, checkpoints, history and
// conflicts to out.
func describeWorkspace(t testing.TB, st *forkspace.Store, ctx context.Context, name string, out map[string]any) {
	t.Helper()
	w, err := st.Workspace(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := w.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What only a workspace's stored nodes hold depends on how far the
	// background folder got: not what the copy is compared on.
	info.ExclusiveBytes, info.SharedBytes = 0, 0
	key := forkspace.TenantFrom(ctx) + "/" + name
	out[key+" info"] = info
	out[key+" head"] = tarOf(t, w.FS)
	cps, err := w.Checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out[key+" checkpoints"] = cps
	for _, cp := range cps {
		fs, err := w.At(ctx, cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		out[key+"@"+cp.ID] = tarOf(t, fs)
	}
	steps, err := st.History(ctx, w.ID(), forkspace.HistoryOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out[key+" history"] = steps
	for _, s := range steps {
		if s.State == "" {
			continue
		}
		fs, err := st.Snapshot(ctx, s.State)
		if err != nil {
			t.Fatal(err)
		}
		out[key+" "+s.State] = tarOf(t, fs)
	}
	conflicts, err := w.Conflicts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out[key+" conflicts"] = conflicts
}

// tarOf lists a tree: each tar header and the BLAKE3 of its contents.
func tarOf(t testing.TB, fs *vfs.FS) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := transfer.ExportTar(context.Background(), fs, "/", &buf, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	var out []string
	r := tar.NewReader(&buf)
	for {
		h, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(r)
		j, _ := json.Marshal(h)
		out = append(out, fmt.Sprintf("%s %x", j, data))
	}
}
