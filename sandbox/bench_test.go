package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/provider"
)

// benchFiles is the workspace size of the round-trip benchmarks.
const benchFiles = 10_000

// benchShell returns a Shell over a workspace of benchFiles small files in
// 100 directories, materialized once (warm-up).
func benchShell(b *testing.B) (*Shell, *forkspace.Workspace) {
	b.Helper()
	needBwrap(b)
	_, ws := newWorkspace(b)
	ctx := context.Background()
	for d := range 100 {
		if err := ws.Mkdir(ctx, fmt.Sprint("d", d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := range benchFiles {
		if err := ws.WriteFile(ctx, fmt.Sprintf("d%d/f%d.txt", i%100, i), []byte(fmt.Sprint("file ", i, "\n")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s := New(ws, Options{Mode: ModeCopy, WorkDir: sandboxtest.WorkDir(b)})
	mustExec(b, s, "true")
	return s, ws
}

// BenchmarkExecRoundTrip is Exec("true") on a 10k-file workspace: with one
// file changed directly before each run (materialize one file, run, scan,
// pull nothing) and with nothing changed, and the same on the FUSE mount
// (fuse/…). Compare with BenchmarkTrue and
// BenchmarkBwrapTrue: the difference is the sandbox's overhead.
func BenchmarkExecRoundTrip(b *testing.B) {
	s, ws := benchShell(b)
	ctx := context.Background()
	b.Run("one-change", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if err := ws.WriteFile(ctx, "d7/f7.txt", []byte(fmt.Sprint("v", i)), 0o644); err != nil {
				b.Fatal(err)
			}
			if res := mustExec(b, s, "true"); res.ExitCode != 0 || s.Stats().Written != 1 {
				b.Fatalf("exit %d, stats %+v", res.ExitCode, s.Stats())
			}
		}
	})
	b.Run("no-change", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mustExec(b, s, "true")
		}
	})
	b.Run("command-changes-one-file", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := mustExec(b, s, "date +%N > d9/f9.txt"); len(res.Changed) != 1 {
				b.Fatalf("changed %v", res.Changed)
			}
		}
	})
	// The same on the FUSE mount of a scratch fork (ModeFUSE).
	fs := New(ws, Options{WorkDir: sandboxtest.WorkDir(b), Mode: ModeFUSE})
	defer fs.Close()
	b.Run("fuse/one-change", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if err := ws.WriteFile(ctx, "d7/f7.txt", []byte(fmt.Sprint("f", i)), 0o644); err != nil {
				b.Fatal(err)
			}
			if res := mustExec(b, fs, "true"); res.ExitCode != 0 || len(res.Changed) != 0 {
				b.Fatalf("exit %d, changed %v", res.ExitCode, res.Changed)
			}
		}
	})
	b.Run("fuse/command-changes-one-file", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := mustExec(b, fs, "date +%N > d9/f9.txt"); len(res.Changed) != 1 {
				b.Fatalf("changed %v", res.Changed)
			}
		}
	})
	// Without inotify the scan walks the 10k files after every command.
	b.Run("one-change-full-scan", func(b *testing.B) {
		s.st.walkOnly = true
		defer func() { s.st.walkOnly = false }()
		s.Close()
		mustExec(b, s, "true")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if err := ws.WriteFile(ctx, "d7/f7.txt", []byte(fmt.Sprint("w", i)), 0o644); err != nil {
				b.Fatal(err)
			}
			mustExec(b, s, "true")
		}
	})
}

// BenchmarkSyncPhases times the host-side phases of a run on the 10k-file
// workspace without starting a sandbox: materializing one changed file and
// scanning the work dir.
func BenchmarkSyncPhases(b *testing.B) {
	s, ws := benchShell(b)
	ctx := context.Background()
	host, err := os.OpenRoot(s.WorkDir())
	if err != nil {
		b.Fatal(err)
	}
	defer host.Close()
	b.Run("materialize-one-change", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			ws.WriteFile(ctx, "d7/f7.txt", []byte(fmt.Sprint("v", i)), 0o644)
			if err := s.materialize(ctx, host); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		sc := &scanner{ctx: ctx, dir: s.WorkDir(), host: host, man: s.st.man, ignore: newMatcher(s.opts.Ignore)}
		for b.Loop() {
			if changes, _, err := sc.scan(); err != nil || len(changes) != 0 {
				b.Fatal(changes, err)
			}
		}
	})
}

// BenchmarkBwrapTrue starts "true" in the sandbox alone (no sync).
func BenchmarkBwrapTrue(b *testing.B) {
	needBwrap(b)
	bwrap, _ := exec.LookPath("bwrap")
	dir := b.TempDir()
	if err := writeEtc(dir); err != nil {
		b.Fatal(err)
	}
	for _, network := range []bool{false, true} {
		b.Run(fmt.Sprint("network=", network), func(b *testing.B) {
			r := &run{bwrap: bwrap, workDir: dir, etcDir: dir, timeout: DefaultTimeout, max: DefaultMaxOutput,
				req: provider.ExecRequest{Command: "true", Network: network}}
			for b.Loop() {
				if out, err := r.start(context.Background()); err != nil || out.exitCode != 0 {
					b.Fatal(out, err)
				}
			}
		})
	}
}

// BenchmarkTrue runs /bin/sh -c true directly: the command's own cost.
func BenchmarkTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstRun is the first Exec of a process on the 10k-file
// workspace: a full materialization into an existing work dir.
func BenchmarkFirstRun(b *testing.B) {
	s, _ := benchShell(b)
	for b.Loop() {
		s.Close() // forget the manifest, as a new process would
		mustExec(b, s, "true")
		if !s.Stats().Full {
			b.Fatal("not a full sync")
		}
	}
}

// BenchmarkSupervision splits what a run costs beyond bubblewrap: "true"
// started by exec'ing bwrap directly, through the gate with the rlimits
// (no cgroup), and through the gate with a cgroup created, polled, read
// and removed (where this process may create one).
func BenchmarkSupervision(b *testing.B) {
	needBwrap(b)
	bwrap, _ := exec.LookPath("bwrap")
	dir := b.TempDir()
	if err := writeEtc(dir); err != nil {
		b.Fatal(err)
	}
	r := &run{bwrap: bwrap, workDir: dir, etcDir: dir, timeout: DefaultTimeout, max: DefaultMaxOutput,
		limits: DefaultLimits, req: provider.ExecRequest{Command: "true"}}
	b.Run("bwrap-direct", func(b *testing.B) {
		for b.Loop() {
			files, err := r.files()
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(bwrap, r.args()...)
			cmd.ExtraFiles = files
			err = cmd.Run()
			closeAll(files)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, cg := range []cgroupBase{{}, hostCgroups()} {
		r.cg = cg
		b.Run("gate+"+cmpOr(cg.mech, mechRlimit), func(b *testing.B) {
			for b.Loop() {
				if out, err := r.start(context.Background()); err != nil || out.exitCode != 0 {
					b.Fatal(out, err)
				}
			}
		})
	}
}

// BenchmarkForkFirstRun is the first Exec (reading the file the fork changed) in a fresh fork of a
// workspace of 12,800 files of 12 KiB (157 MB) in 128 directories, the
// case of issue 8: seeded from the parent's materialized work dir, and
// materialized from the workspace when the parent's is not available (as
// before seeding existed), and on the FUSE mount of a scratch fork of the
// fork (ModeFUSE: nothing materialized). For scale, "parent-one-change"
// is a run in the parent after a one-file change.
func BenchmarkForkFirstRun(b *testing.B) {
	needBwrap(b)
	_, parent := newWorkspace(b)
	ctx := context.Background()
	body := make([]byte, 12<<10)
	for i := range 12_800 {
		if i%100 == 0 {
			if err := parent.Mkdir(ctx, fmt.Sprint("d", i/100), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		copy(body, fmt.Sprintf("file %d\n", i))
		if err := parent.WriteFile(ctx, fmt.Sprintf("d%d/f%d", i/100, i), body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	base := sandboxtest.Dir(b)
	ps := New(parent, Options{Mode: ModeCopy, WorkDir: filepath.Join(base, "parent")})
	defer ps.Close()
	mustExec(b, ps, "true")
	forks := 0
	// firstRun times the first run in a fresh fork with one file changed,
	// in mode; in ModeCopy, seeded says whether it must have been seeded.
	firstRun := func(b *testing.B, mode Mode, seeded bool) {
		var copied int64
		for b.Loop() {
			b.StopTimer()
			forks++
			fork, err := parent.Fork(ctx, fmt.Sprint("fork", forks), forkspace.ForkOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if err := fork.WriteFile(ctx, "d7/f707", []byte("changed in the fork"), 0o644); err != nil {
				b.Fatal(err)
			}
			fs := New(fork, Options{Mode: mode, WorkDir: filepath.Join(base, "fork")})
			b.StartTimer()
			mustExec(b, fs, "cat d7/f707 > /dev/null")
			b.StopTimer()
			if st := fs.Stats(); mode == ModeCopy && ((st.Seeded > 0) != seeded || st.Full == seeded) {
				b.Fatalf("seeded %v: stats %+v", seeded, st)
			}
			if mode == ModeCopy {
				copied += fs.Stats().Copied
			}
			if err := fs.Discard(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(copied)/float64(b.N)/1e6, "MB-copied/op")
	}
	b.Run("seeded", func(b *testing.B) { firstRun(b, ModeCopy, true) })
	b.Run("fuse", func(b *testing.B) { firstRun(b, ModeFUSE, false) })
	b.Run("parent-one-change", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if err := parent.WriteFile(ctx, "d7/f707", []byte(fmt.Sprint("v", i)), 0o644); err != nil {
				b.Fatal(err)
			}
			mustExec(b, ps, "true")
		}
	})
	ps.Close() // the parent's work dir is no longer known: no seeding
	b.Run("unseeded", func(b *testing.B) { firstRun(b, ModeCopy, false) })
}
