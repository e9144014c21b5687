package httpapi_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// TestAPI runs the same scenario against Local and against Client
// through a real server: both give the same results and the same error
// sentinels.
func TestAPI(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := context.Background()
		// Workspaces, a page at a time.
		for _, n := range []string{"c", "a", "e", "b", "d"} {
			_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: n})
			must(t, err)
		}
		var names []string
		for cur := ""; ; {
			p, err := api.ListWorkspaces(ctx, httpapi.PageRequest{Cursor: cur, Limit: 2})
			must(t, err)
			for _, i := range p.Workspaces {
				names = append(names, i.Name)
			}
			if cur = p.Next; cur == "" {
				break
			}
		}
		if strings.Join(names, ",") != "a,b,c,d,e" {
			t.Fatalf("pages: %v", names)
		}
		if _, err := api.ListWorkspaces(ctx, httpapi.PageRequest{Cursor: "!!"}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("bad cursor: %v", err)
		}
		info, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w", Quota: meta.Quota{MaxBytes: 1000}})
		must(t, err)
		if info.Quota.MaxBytes != 1000 || info.ID == "" {
			t.Errorf("created %+v", info)
		}
		if _, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"}); !errors.Is(err, fs.ErrExist) {
			t.Errorf("create twice: %v", err)
		}
		if _, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "bad name"}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("bad name: %v", err)
		}
		if got, err := api.WorkspaceInfo(ctx, "w"); err != nil || got.ID != info.ID {
			t.Errorf("info: %+v %v", got, err)
		}
		if _, err := api.WorkspaceInfo(ctx, "w@x"); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("info of a checkpoint: %v", err)
		}
		if _, err := api.WorkspaceInfo(ctx, "nope"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("info of a missing workspace: %v", err)
		}

		// Files.
		must(t, api.Mkdir(ctx, "w", "src/pkg", true))
		ent, err := api.Write(ctx, "w", "src/pkg/a.go", strings.NewReader("package pkg\n"), httpapi.WriteRequest{})
		must(t, err)
		if ent.Size != 12 || ent.ETag == "" || ent.Type != "file" || ent.Mode != "0644" {
			t.Errorf("written %+v", ent)
		}
		st, err := api.Stat(ctx, "w", "/src/pkg/a.go")
		must(t, err)
		if st.ETag != ent.ETag || st.Path != "src/pkg/a.go" {
			t.Errorf("stat %+v vs %+v", st, ent)
		}
		d, err := api.Open(ctx, "w", "src/pkg/a.go", httpapi.ReadRequest{Length: -1})
		must(t, err)
		got, _ := io.ReadAll(d)
		d.Close()
		if string(got) != "package pkg\n" {
			t.Errorf("read %q", got)
		}
		d, err = api.Open(ctx, "w", "src/pkg/a.go", httpapi.ReadRequest{Offset: 8, Length: 3, Ranged: true})
		must(t, err)
		got, _ = io.ReadAll(d)
		d.Close()
		if string(got) != "pkg" || !d.Ranged || d.Offset != 8 {
			t.Errorf("range read %q %+v", got, d)
		}
		if _, err := api.Open(ctx, "w", "src/pkg/a.go", httpapi.ReadRequest{IfNoneMatch: []string{ent.ETag}}); !errors.Is(err, httpapi.ErrNotModified) {
			t.Errorf("If-None-Match: %v", err)
		}
		if _, err := api.Open(ctx, "w", "src/pkg/a.go", httpapi.ReadRequest{Offset: 12, Ranged: true, Length: -1}); !errors.Is(err, httpapi.ErrRange) {
			t.Errorf("range past the end: %v", err)
		}
		// Conditional writes.
		if _, err := api.Write(ctx, "w", "src/pkg/a.go", strings.NewReader("x"), httpapi.WriteRequest{IfMatch: []string{`"stale"`}}); !errors.Is(err, httpapi.ErrPrecondition) {
			t.Errorf("If-Match mismatch: %v", err)
		}
		if _, err := api.Write(ctx, "w", "src/pkg/a.go", strings.NewReader("x"), httpapi.WriteRequest{CreateOnly: true}); !errors.Is(err, httpapi.ErrPrecondition) {
			t.Errorf("create-only over a file: %v", err)
		}
		ent2, err := api.Write(ctx, "w", "src/pkg/a.go", strings.NewReader("package pkg // v2\n"), httpapi.WriteRequest{IfMatch: []string{ent.ETag}})
		must(t, err)
		if ent2.ETag == ent.ETag {
			t.Error("ETag unchanged by a write")
		}
		// Quota: refused, nothing changed.
		if _, err := api.Write(ctx, "w", "big.bin", bytes.NewReader(make([]byte, 5000)), httpapi.WriteRequest{}); !errors.Is(err, errdefs.ErrQuota) {
			t.Errorf("over quota: %v", err)
		}
		if _, err := api.Stat(ctx, "w", "big.bin"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a refused write left big.bin: %v", err)
		}
		// Escapes.
		for _, p := range []string{"../etc/passwd", "/../x", "a/../../x"} {
			if _, err := api.Stat(ctx, "w", p); !errors.Is(err, fs.ErrInvalid) {
				t.Errorf("stat %s: %v", p, err)
			}
			if _, err := api.Write(ctx, "w", p, strings.NewReader("x"), httpapi.WriteRequest{}); !errors.Is(err, fs.ErrInvalid) {
				t.Errorf("write %s: %v", p, err)
			}
		}
		must(t, api.Rename(ctx, "w", "src/pkg/a.go", "src/pkg/b.go"))
		for i := range 5 {
			_, err := api.Write(ctx, "w", "src/f"+string(rune('0'+i)), strings.NewReader("f"), httpapi.WriteRequest{Perm: 0o600})
			must(t, err)
		}
		var listed []string
		for cur := ""; ; {
			p, err := api.ReadDir(ctx, "w", "src", httpapi.PageRequest{Cursor: cur, Limit: 4})
			must(t, err)
			for _, e := range p.Entries {
				listed = append(listed, e.Name+":"+e.Mode)
			}
			if cur = p.Next; cur == "" {
				break
			}
		}
		if strings.Join(listed, ",") != "f0:0600,f1:0600,f2:0600,f3:0600,f4:0600,pkg:0755" {
			t.Errorf("listing: %v", listed)
		}
		g, err := api.Glob(ctx, "w", httpapi.GlobRequest{Pattern: "**/*.go"})
		must(t, err)
		if !strings.Contains(g.Text, "src/pkg/b.go") {
			t.Errorf("glob: %q", g.Text)
		}
		gr, err := api.Grep(ctx, "w", httpapi.GrepRequest{Pattern: "v2"})
		must(t, err)
		if !strings.Contains(gr.Text, "src/pkg/b.go:1:") {
			t.Errorf("grep: %q", gr.Text)
		}
		if _, err := api.Grep(ctx, "w", httpapi.GrepRequest{Pattern: "x", Path: "nope"}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("grep in a missing dir: %v", err)
		}
		if err := api.Remove(ctx, "w", "src", false); !errors.Is(err, errdefs.ErrNotEmpty) {
			t.Errorf("rm of a full dir: %v", err)
		}
		if err := api.Mkdir(ctx, "w", "src", false); !errors.Is(err, fs.ErrExist) {
			t.Errorf("mkdir of an existing dir: %v", err)
		}

		// Checkpoints, restore, diff, fork.
		cp, err := api.Checkpoint(ctx, "w", "one")
		must(t, err)
		must(t, api.Remove(ctx, "w", "src/f0", false))
		changes, err := api.Diff(ctx, "w@one", "w", true)
		must(t, err)
		if len(changes) != 1 || changes[0].Op != vfs.Deleted || changes[0].Path != "src/f0" {
			t.Errorf("diff: %+v", changes)
		}
		if _, err := api.Write(ctx, "w@one", "x", strings.NewReader("x"), httpapi.WriteRequest{}); !errors.Is(err, errdefs.ErrReadOnly) {
			t.Errorf("write to a checkpoint: %v", err)
		}
		if _, err := api.Checkpoint(ctx, "w@one", ""); !errors.Is(err, errdefs.ErrReadOnly) {
			t.Errorf("checkpoint of a checkpoint: %v", err)
		}
		must(t, api.Restore(ctx, "w", "one"))
		if _, err := api.Stat(ctx, "w", "src/f0"); err != nil {
			t.Errorf("after restore: %v", err)
		}
		cps, err := api.Checkpoints(ctx, "w")
		must(t, err)
		if len(cps) != 1 || cps[0].ID != cp.ID {
			t.Errorf("checkpoints %+v", cps)
		}
		fi, err := api.ForkWorkspace(ctx, "w@one", httpapi.ForkRequest{Name: "w2"})
		must(t, err)
		if fi.ParentID != info.ID || fi.Origin != cp.ID {
			t.Errorf("fork %+v", fi)
		}
		if _, err := api.ForkWorkspace(ctx, "w", httpapi.ForkRequest{Name: "w2"}); !errors.Is(err, fs.ErrExist) {
			t.Errorf("fork onto a taken name: %v", err)
		}
		if _, err := api.Diff(ctx, "w", "nope", false); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("diff with a missing state: %v", err)
		}
		parent, err := api.Parent(ctx, "w2")
		must(t, err)
		if parent != cp.ID && !strings.Contains(parent, cp.ID) {
			t.Errorf("parent %q", parent)
		}
		if _, err := api.Parent(ctx, "a"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("parent of a non-fork: %v", err)
		}

		// Import and export round trip.
		var buf bytes.Buffer
		sum, err := api.ExportTar(ctx, "w", "src", &buf)
		must(t, err)
		if sum.Entries == 0 || sum.Path != "src" {
			t.Errorf("export summary %+v", sum)
		}
		names = nil
		for tr := tar.NewReader(bytes.NewReader(buf.Bytes())); ; {
			h, err := tr.Next()
			if err != nil {
				break
			}
			names = append(names, h.Name)
		}
		if len(names) < 7 {
			t.Errorf("exported %v", names)
		}
		sum, err = api.ImportTar(ctx, "a", "copy", bytes.NewReader(buf.Bytes()))
		must(t, err)
		if sum.Entries == 0 || sum.Path != "copy" {
			t.Errorf("import summary %+v", sum)
		}
		if _, err := api.Stat(ctx, "a", "copy/pkg/b.go"); err != nil {
			t.Errorf("imported: %v", err)
		}
		if _, err := api.ImportTar(ctx, "w", "copy", bytes.NewReader(buf.Bytes())); err != nil {
			t.Errorf("import within the quota: %v", err)
		}
		var bigTar bytes.Buffer
		tw := tar.NewWriter(&bigTar)
		tw.WriteHeader(&tar.Header{Name: "big", Mode: 0o644, Size: 4000, Typeflag: tar.TypeReg})
		tw.Write(make([]byte, 4000))
		tw.Close()
		if _, err := api.ImportTar(ctx, "w", "more", &bigTar); !errors.Is(err, errdefs.ErrQuota) {
			t.Errorf("import past the quota: %v", err)
		}
		if _, err := api.ImportTar(ctx, "a", "bad", strings.NewReader("not a tar archive at all, no")); err == nil {
			t.Error("import of garbage succeeded")
		}
		if _, err := api.Stat(ctx, "a", "bad"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a refused import left something: %v", err)
		}

		// Mounts, audit, gc, fsck, df.
		ms, err := api.Mounts(ctx, "w")
		must(t, err)
		if len(ms) != 0 {
			t.Errorf("mounts %+v", ms)
		}
		must(t, api.MountAction(ctx, "w", httpapi.MountFlush, ""))
		if err := api.MountAction(ctx, "w", "explode", ""); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("bad mount action: %v", err)
		}
		if err := api.ResolveMount(ctx, "w", "src/f1", true); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("resolve outside mounts: %v", err)
		}
		es, err := api.Audit(ctx, "w", audit.Filter{})
		must(t, err)
		tools := map[string]bool{}
		for _, en := range es {
			tools[en.Tool] = true
		}
		for _, want := range []string{"rest.write", "rest.mkdir", "rest.rename", "rest.remove", "rest.checkpoint", "rest.restore", "rest.fork"} {
			if !tools[want] {
				t.Errorf("audit log lacks %s: %v", want, tools)
			}
		}
		if _, err := api.Audit(ctx, "nope", audit.Filter{}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("audit of a missing workspace: %v", err)
		}
		plan, err := api.GC(ctx, httpapi.GCRequest{DryRun: true})
		must(t, err)
		if !plan.DryRun || plan.Reachable.Objects() == 0 {
			t.Errorf("gc plan %+v", plan)
		}
		_, err = api.GC(ctx, httpapi.GCRequest{})
		must(t, err)
		rep, err := api.Fsck(ctx)
		must(t, err)
		if !rep.Clean() {
			t.Errorf("fsck %+v", rep)
		}
		df, err := api.DF(ctx)
		must(t, err)
		if len(df.Workspaces) != 7 {
			t.Errorf("df %+v", df)
		}
		must(t, api.DeleteWorkspace(ctx, "w2"))
		if err := api.DeleteWorkspace(ctx, "w2"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("delete twice: %v", err)
		}
		must(t, api.Remove(ctx, "w", "src", true))
	})
}

// TestMountConflict: a manual write-back over an upstream change is a
// conflict (errdefs.ErrConflict, HTTP 409), listed by Mounts and settled
// by ResolveMount, through both implementations.
func TestMountConflict(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := context.Background()
		host := t.TempDir()
		hostFile := filepath.Join(host, "f.txt")
		must(t, os.WriteFile(hostFile, []byte("v1\n"), 0o644))
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "m", Mounts: []string{"/h=file://" + host + "?mode=rw&writeback=manual"}})
		must(t, err)
		if _, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "x", Mounts: []string{"/h=nope://x"}}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("unknown mount scheme: %v", err)
		}
		_, err = api.Stat(ctx, "m", "h/f.txt")
		must(t, err)
		_, err = api.Write(ctx, "m", "h/f.txt", strings.NewReader("local\n"), httpapi.WriteRequest{})
		must(t, err)
		must(t, os.WriteFile(hostFile, []byte("upstream edit\n"), 0o644))
		if err := api.MountAction(ctx, "m", httpapi.MountFlush, ""); !errors.Is(err, errdefs.ErrConflict) {
			t.Fatalf("flush over an upstream change: %v", err)
		}
		ms, err := api.Mounts(ctx, "m")
		must(t, err)
		if len(ms) != 1 || len(ms[0].Conflicts) != 1 {
			t.Fatalf("mounts %+v", ms)
		}
		must(t, api.ResolveMount(ctx, "m", "/h/f.txt", true))
		if b, _ := os.ReadFile(hostFile); string(b) != "local\n" {
			t.Errorf("keep-local did not force-push: %q", b)
		}
		must(t, api.MountAction(ctx, "m", httpapi.MountRefresh, "/h"))
		must(t, api.MountAction(ctx, "m", httpapi.MountPrefetch, ""))
	})
}
