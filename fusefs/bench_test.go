package fusefs_test

import (
	"archive/tar"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/forkspace/forkspace/fusefs/fusetest"
)

// BenchmarkSmallFiles creates, stats, reads and unlinks 10,000 files of
// 1 KiB on one thread, on a forkspace mount, on ext4 (the temporary
// directory) and on a go-fuse loopback mount over it (userspace data
// path), side by side. Each phase is reported per op; ns/op is the whole
// round of 10,000 files.
//
//	go test -run '^$' -bench BenchmarkSmallFiles -benchtime 3x ./fusefs
func BenchmarkSmallFiles(b *testing.B) {
	fusetest.Require(b)
	targets := []struct {
		name  string
		mount func(b *testing.B) string
	}{
		{"forkspace", func(b *testing.B) string { _, dir := newMount(b); return dir }},
		{"ext4", func(b *testing.B) string { return b.TempDir() }},
		{"loopback", loopback},
	}
	for _, tg := range targets {
		b.Run(tg.name, func(b *testing.B) {
			dir := tg.mount(b)
			data := make([]byte, 1024)
			const n = 10_000
			var phases [4]time.Duration
			round := 0
			for b.Loop() {
				round++
				sub := filepath.Join(dir, fmt.Sprint(round))
				if err := os.Mkdir(sub, 0o755); err != nil {
					b.Fatal(err)
				}
				names := make([]string, n)
				for i := range names {
					names[i] = filepath.Join(sub, fmt.Sprintf("f%05d", i))
				}
				phase := func(k int, fn func(string) error) {
					start := time.Now()
					for _, p := range names {
						if err := fn(p); err != nil {
							b.Fatal(err)
						}
					}
					phases[k] += time.Since(start)
				}
				phase(0, func(p string) error { return os.WriteFile(p, data, 0o644) })
				phase(1, func(p string) error { _, err := os.Stat(p); return err })
				phase(2, func(p string) error { _, err := os.ReadFile(p); return err })
				phase(3, os.Remove)
			}
			for k, name := range []string{"create", "stat", "read", "unlink"} {
				b.ReportMetric(float64(phases[k].Microseconds())/float64(round)/1000, name+"-ms")
			}
		})
	}
}

// loopback mounts go-fuse's loopback file system over a temporary ext4
// directory.
func loopback(b *testing.B) string {
	root, err := gofs.NewLoopbackRoot(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	sec := time.Second
	srv, err := gofs.Mount(dir, root, &gofs.Options{EntryTimeout: &sec, AttrTimeout: &sec})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Unmount() })
	return dir
}

// BenchmarkRoundTrip measures one FUSE request's round trip on this
// machine: a stat on a go-fuse loopback mount whose attributes expire at
// once (so each stat is one GETATTR from the kernel to the daemon and
// back) while its entries stay cached (no LOOKUP). It is the floor under
// every operation a FUSE file system serves, whatever the file system
// does with the request; ns/op is one round trip. ext4 is the same stat
// on the directory under the mount, for scale.
//
//	go test -run '^$' -bench BenchmarkRoundTrip ./fusefs
func BenchmarkRoundTrip(b *testing.B) {
	fusetest.Require(b)
	under := b.TempDir()
	ok(b, os.WriteFile(filepath.Join(under, "f"), []byte("x"), 0o644))
	b.Run("ext4", func(b *testing.B) { statLoop(b, filepath.Join(under, "f")) })
	b.Run("fuse-getattr", func(b *testing.B) {
		root, err := gofs.NewLoopbackRoot(under)
		ok(b, err)
		dir := b.TempDir()
		entry, attr := time.Hour, time.Duration(0)
		srv, err := gofs.Mount(dir, root, &gofs.Options{EntryTimeout: &entry, AttrTimeout: &attr})
		ok(b, err)
		b.Cleanup(func() { _ = srv.Unmount() })
		statLoop(b, filepath.Join(dir, "f"))
	})
}

// statLoop stats path b.N times.
func statLoop(b *testing.B, path string) {
	for b.Loop() {
		if _, err := os.Stat(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUntar extracts a 4,000-file node_modules-shaped tar (200
// packages of 20 files of 100 B to 6 KiB, as bench/fuse-vs-ext4.sh's at a
// fifth of its size) with tar(1) onto a forkspace mount; ns/op is one
// extraction.
//
//	go test -run '^$' -bench BenchmarkUntar -benchtime 3x ./fusefs
func BenchmarkUntar(b *testing.B) {
	fusetest.Require(b)
	if _, err := exec.LookPath("tar"); err != nil {
		b.Fatalf("tar(1): %v", err)
	}
	archive := filepath.Join(b.TempDir(), "nm.tar")
	if err := writeNodeModules(archive, 200); err != nil {
		b.Fatal(err)
	}
	_, dir := newMount(b)
	round := 0
	for b.Loop() {
		round++
		d := filepath.Join(dir, fmt.Sprint(round))
		ok(b, os.Mkdir(d, 0o755))
		if out, err := exec.Command("tar", "-C", d, "-xf", archive).CombinedOutput(); err != nil {
			b.Fatalf("tar -xf: %v: %s", err, out)
		}
	}
}

// writeNodeModules writes to path a tar of a node_modules tree of pkgs
// packages of 20 files each: package.json, README.md, lib/m0-11.js and
// lib/util/u0-5.js of 100 B to 6 KiB.
func writeNodeModules(path string, pkgs int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create archive: %w", err)
	}
	tw := tar.NewWriter(f)
	err = errors.Join(archiveNodeModules(tw, pkgs), tw.Close(), f.Close())
	if err != nil {
		return fmt.Errorf("write archive %s: %w", path, err)
	}
	return nil
}

// archiveNodeModules writes writeNodeModules's tree to tw.
func archiveNodeModules(tw *tar.Writer, pkgs int) error {
	rng := rand.New(rand.NewPCG(1, 1))
	files := []string{"package.json", "README.md"}
	for i := range 12 {
		files = append(files, fmt.Sprintf("lib/m%d.js", i))
	}
	for i := range 6 {
		files = append(files, fmt.Sprintf("lib/util/u%d.js", i))
	}
	mtime := time.Unix(1.7e9, 0)
	add := func(h *tar.Header, body []byte) error {
		h.ModTime = mtime
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("header of %s: %w", h.Name, err)
		}
		if _, err := tw.Write(body); err != nil {
			return fmt.Errorf("body of %s: %w", h.Name, err)
		}
		return nil
	}
	for p := range pkgs {
		pkg := fmt.Sprintf("node_modules/pkg-%04d/", p)
		for _, d := range []string{pkg, pkg + "lib/", pkg + "lib/util/"} {
			if err := add(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755}, nil); err != nil {
				return err
			}
		}
		for _, name := range files {
			body := make([]byte, 100+rng.IntN(5900))
			for i := range body {
				body[i] = 'a' + byte(rng.IntN(16))
			}
			if err := add(&tar.Header{Typeflag: tar.TypeReg, Name: pkg + name, Mode: 0o644, Size: int64(len(body))}, body); err != nil {
				return err
			}
		}
	}
	return nil
}
