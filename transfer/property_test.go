package transfer_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/transfer"
)

// archiveModel is a generated tree: tar headers in a valid order (parents
// before children, link targets before links) and the tree they describe.
type archiveModel struct {
	headers []*tar.Header
	bodies  map[string][]byte
	want    tree
}

var (
	propNames   = []string{"a", "b", "c", "x.txt", "y", "z z", "ü"}
	propModes   = []int64{0o644, 0o600, 0o755, 0o4755, 0o2750, 0o1777}
	propTargets = []string{"a", "../x", "/etc/passwd", "b/c", "dangling", "."}
)

func genArchive(t *rapid.T) archiveModel {
	m := archiveModel{bodies: map[string][]byte{}, want: tree{}}
	taken := map[string]bool{}
	dirs := []string{""}
	var files []string
	mtime := func(label string) time.Time {
		return base.Add(time.Duration(rapid.Int64Range(0, 1e15).Draw(t, label)))
	}
	fresh := func(label string) (string, bool) {
		p := path.Join(rapid.SampledFrom(dirs).Draw(t, label+"-dir"), rapid.SampledFrom(propNames).Draw(t, label+"-name"))
		if taken[p] {
			return "", false
		}
		taken[p] = true
		return p, true
	}
	for i := range rapid.IntRange(0, 5).Draw(t, "dirs") {
		p, ok := fresh(fmt.Sprint("d", i))
		if !ok {
			continue
		}
		mt, mode := mtime("dmtime"), rapid.SampledFrom([]int64{0o755, 0o700, 0o1777}).Draw(t, "dmode")
		dirs = append(dirs, p)
		m.headers = append(m.headers, &tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode, ModTime: mt, Format: tar.FormatPAX})
		m.want[p] = node{Type: "dir", Mode: tarMode(mode), Mtime: mt.UnixNano()}
	}
	groups := map[string][]string{}
	for i := range rapid.IntRange(0, 12).Draw(t, "entries") {
		p, ok := fresh(fmt.Sprint("e", i))
		if !ok {
			continue
		}
		kind := rapid.SampledFrom([]byte{tar.TypeReg, tar.TypeSymlink, tar.TypeLink}).Draw(t, "kind")
		if kind == tar.TypeLink && len(files) == 0 {
			kind = tar.TypeReg
		}
		mt := mtime("mtime")
		switch kind {
		case tar.TypeReg:
			data := rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "data")
			mode := rapid.SampledFrom(propModes).Draw(t, "mode")
			uid := rapid.IntRange(0, 70000).Draw(t, "uid")
			m.headers = append(m.headers, &tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data)), Uid: uid, Gid: uid + 1, ModTime: mt, Format: tar.FormatPAX})
			m.bodies[p] = data
			s, _ := sum(bytes.NewReader(data))
			m.want[p] = node{Type: "file", Mode: tarMode(mode), Mtime: mt.UnixNano(), Sum: s, UID: uid, GID: uid + 1}
			files = append(files, p)
			groups[p] = []string{p}
		case tar.TypeSymlink:
			target := rapid.SampledFrom(propTargets).Draw(t, "target")
			m.headers = append(m.headers, &tar.Header{Typeflag: tar.TypeSymlink, Name: p, Linkname: target, Mode: 0o777, ModTime: mt, Format: tar.FormatPAX})
			m.want[p] = node{Type: "symlink", Mode: 0o777, Target: target}
		case tar.TypeLink:
			target := rapid.SampledFrom(files).Draw(t, "link")
			m.headers = append(m.headers, &tar.Header{Typeflag: tar.TypeLink, Name: p, Linkname: target})
			m.want[p] = m.want[target]
			groups[target] = append(groups[target], p)
		}
	}
	linkGroups(m.want, groups)
	return m
}

func tarMode(mode int64) fs.FileMode {
	return bits((&tar.Header{Mode: mode}).FileInfo().Mode())
}

func (m archiveModel) tar(t *rapid.T) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range m.headers {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("write header %s: %v", h.Name, err)
		}
		if _, err := tw.Write(m.bodies[h.Name]); h.Typeflag == tar.TypeReg && err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTarModel checks, for generated archives, that tar → workspace → tar
// reproduces the tree the archive describes: types, modes, nanosecond
// mtimes, owners, contents, link targets and hard-link groups.
func TestTarModel(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		m := genArchive(t)
		n++
		ws, err := st.Create(ctx, fmt.Sprint("p", n), forkspace.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Delete(ctx, ws.ID())
		dst := rapid.SampledFrom([]string{".", "t", "/deep/er/"}).Draw(t, "dst")
		if err := transfer.ImportTar(ctx, ws.FS, dst, bytes.NewReader(m.tar(t)), transfer.Options{}); err != nil {
			t.Fatalf("import: %v", err)
		}
		var out bytes.Buffer
		if err := transfer.ExportTar(ctx, ws.FS, strings.Trim(dst, "/"), &out, transfer.Options{}); err != nil {
			t.Fatalf("export: %v", err)
		}
		diffTrees(t, m.want, tarTree(t, &out))
	})
}
