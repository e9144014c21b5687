package fusefs_test

import (
	"fmt"
	"os"
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
