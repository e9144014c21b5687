package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/provider"
)

func TestIncrementalSync(t *testing.T) {
	s, ws := newShell(t, Options{})
	ctx := context.Background()
	for i := range 200 {
		writeWS(t, ws, fmt.Sprintf("d%d/f%d", i%10, i), fmt.Sprint(i), 0o644)
	}
	mustExec(t, s, "true")
	if st := s.Stats(); !st.Full || st.Written != 200 || st.Dirs != 10 {
		t.Errorf("first run: %+v, want a full sync writing 200 files and 10 directories", st)
	}
	steps := []struct {
		name   string
		change func()
		want   Stats
	}{
		{"no change", func() {}, Stats{}},
		{"one file", func() { writeWS(t, ws, "d3/f13", "changed", 0o644) }, Stats{Written: 1}},
		{"one chmod", func() { ws.Chmod(ctx, "d4/f14", 0o600) }, Stats{Chmods: 1}},
		{"one delete", func() { ws.Remove(ctx, "d5/f15") }, Stats{Removed: 1}},
		{"one symlink", func() { ws.Symlink(ctx, "f16", "d6/l") }, Stats{Links: 1}},
		{"rename a directory", func() { ws.Rename(ctx, "d7", "e7") }, Stats{Removed: 1, Written: 20, Dirs: 1}},
		{"one file among many fold rows", func() {
			for i := range 5 {
				writeWS(t, ws, "d8/f18", fmt.Sprint("v", i), 0o644)
			}
		}, Stats{Written: 1}},
	}
	for _, step := range steps {
		step.change()
		mustExec(t, s, "true")
		if got := s.Stats(); got != step.want {
			t.Errorf("%s: stats %+v, want %+v", step.name, got, step.want)
		}
		sameTree(t, s, ws)
	}
	// A change made by a command is pulled and not written back.
	mustExec(t, s, "echo cmd > d9/f19")
	mustExec(t, s, "true")
	if got := s.Stats(); got != (Stats{}) {
		t.Errorf("after pulling a command's change: stats %+v, want nothing written", got)
	}
	// Another Shell on the same work dir shares what this process knows.
	other := New(ws, Options{Mode: ModeCopy, WorkDir: s.WorkDir()})
	if _, err := other.Exec(ctx, provider.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	if got := other.Stats(); got != (Stats{}) {
		t.Errorf("second Shell on the work dir: stats %+v", got)
	}
	// A process that used the work dir since (another token) forces a full
	// sync.
	if err := os.WriteFile(filepath.Join(s.WorkDir()+".state", "token"), []byte("other"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(s.WorkDir(), "stray"), []byte("x"), 0o644)
	mustExec(t, s, "true")
	if !s.Stats().Full {
		t.Errorf("after another process: stats %+v, want a full sync", s.Stats())
	}
	sameTree(t, s, ws)
}

func TestIgnored(t *testing.T) {
	s, ws := newShell(t, Options{})
	writeWS(t, ws, "src/__pycache__/old.pyc", "stale", 0o644)
	res := mustExec(t, s, "ls src/__pycache__ 2>&1; mkdir -p .cache/go node_modules/.cache src/__pycache__ && echo c > .cache/go/x && echo n > node_modules/.cache/y && echo p > src/__pycache__/z.pyc && echo kept > node_modules/m")
	if want := []provider.Change{{Path: "node_modules", Op: opCreated}, {Path: "node_modules/m", Op: opCreated}, {Path: "src/__pycache__", Op: opCreated}}; !slices.Equal(res.Changed, want) && len(res.Changed) != 2 {
		t.Logf("Changed %v", res.Changed)
	}
	for _, p := range []string{".cache", "node_modules/.cache", "src/__pycache__/z.pyc"} {
		if _, err := ws.Lstat(context.Background(), p); err == nil {
			t.Errorf("ignored %s was pulled", p)
		}
	}
	if got, _ := readWS(t, ws, "node_modules/m"); got != "kept\n" {
		t.Errorf("node_modules/m = %q", got)
	}
	// Ignored paths persist in the work dir between runs, like caches.
	if res := mustExec(t, s, "cat .cache/go/x node_modules/.cache/y"); res.Stdout != "c\nn\n" {
		t.Errorf("caches between runs: %q %q", res.Stdout, res.Stderr)
	}
	sameTree(t, s, ws)
}

func TestReadOnlyPaths(t *testing.T) {
	s, ws := newShell(t, Options{ReadOnly: []string{"/ro/"}})
	writeWS(t, ws, "ro/a", "a", 0o644)
	writeWS(t, ws, "ro/c", "c", 0o644)
	writeWS(t, ws, "rw/a", "a", 0o644)
	res := mustExec(t, s, "echo changed > ro/a; echo new > ro/b; rm ro/c; echo changed > rw/a")
	want := []provider.Change{
		{Path: "ro/c", Op: opDeleted, Reason: reasonReadOnly},
		{Path: "ro/a", Op: opModified, Reason: reasonReadOnly},
		{Path: "ro/b", Op: opCreated, Reason: reasonReadOnly},
	}
	if !slices.Equal(res.Dropped, want) {
		t.Errorf("Dropped = %v, want %v", res.Dropped, want)
	}
	if !slices.Equal(res.Changed, []provider.Change{{Path: "rw/a", Op: opModified}}) {
		t.Errorf("Changed = %v", res.Changed)
	}
	for p, want := range map[string]string{"ro/a": "a", "ro/c": "c", "rw/a": "changed\n"} {
		if got, _ := readWS(t, ws, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	// The next run sees the workspace's read-only state again.
	if res := mustExec(t, s, "cat ro/a ro/c; ls ro"); res.Stdout != "aca\nc\n" {
		t.Errorf("next run: %q", res.Stdout)
	}
	sameTree(t, s, ws)
}

func TestSpecialFilesDropped(t *testing.T) {
	s, ws := newShell(t, Options{})
	res := mustExec(t, s, "mkfifo pipe && echo ok > f")
	if !slices.Equal(res.Dropped, []provider.Change{{Path: "pipe", Op: opCreated, Reason: reasonSpecial}}) {
		t.Errorf("Dropped = %v", res.Dropped)
	}
	if res := mustExec(t, s, "ls"); res.Stdout != "f\n" {
		t.Errorf("next run sees %q", res.Stdout)
	}
	sameTree(t, s, ws)
}

// runBlocked starts command, which must create the file started and then
// wait for the file go; while it waits, during runs and the test lets it
// finish.
func runBlocked(t *testing.T, s *Shell, command string, during func()) provider.ExecResult {
	t.Helper()
	var (
		res provider.ExecResult
		err error
		wg  sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, err = s.Exec(context.Background(), provider.ExecRequest{
			Command: "touch started; while [ ! -e go ]; do sleep 0.01; done; rm started go; " + command})
	}()
	for {
		if _, err := os.Stat(filepath.Join(s.WorkDir(), "started")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	during()
	if err := os.WriteFile(filepath.Join(s.WorkDir(), "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestConflicts(t *testing.T) {
	tests := []struct {
		name        string
		resolution  Resolution
		wantContent string
		wantDropped bool
	}{
		{"command wins by default", Accept, "command\n", false},
		{"hook keeps the local write", KeepLocal, "local", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen []Conflict
			s, ws := newShell(t, Options{OnConflict: func(_ context.Context, c Conflict) Resolution {
				seen = append(seen, c)
				return tc.resolution
			}})
			writeWS(t, ws, "f", "original", 0o644)
			writeWS(t, ws, "untouched", "original", 0o644)
			res := runBlocked(t, s, "echo command > f; echo command > both-new", func() {
				writeWS(t, ws, "f", "local", 0o644)
				writeWS(t, ws, "untouched", "local", 0o644)
				writeWS(t, ws, "both-new", "local", 0o644)
			})
			want := []Conflict{{Path: "both-new", Op: opCreated}, {Path: "f", Op: opModified}}
			if !slices.Equal(seen, want) {
				t.Errorf("conflicts %v, want %v", seen, want)
			}
			if got, _ := readWS(t, ws, "f"); got != tc.wantContent {
				t.Errorf("f = %q, want %q", got, tc.wantContent)
			}
			if got, _ := readWS(t, ws, "untouched"); got != "local" {
				t.Errorf("untouched = %q: a direct write the command did not touch was lost", got)
			}
			if got := len(res.Dropped) == 2; got != tc.wantDropped {
				t.Errorf("Dropped = %v", res.Dropped)
			}
			// The next run sees the workspace's state in every case.
			if res := mustExec(t, s, "cat f untouched both-new"); res.Stdout != tc.wantContent+"local"+map[bool]string{false: "command\n", true: "local"}[tc.wantDropped] {
				t.Errorf("next run reads %q", res.Stdout)
			}
			sameTree(t, s, ws)
		})
	}
}

func TestConcurrentExecs(t *testing.T) {
	s, ws := newShell(t, Options{})
	writeWS(t, ws, "counter", "0", 0o644)
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			// Serialised runs: each increments the counter it sees.
			res, err := s.Exec(context.Background(), provider.ExecRequest{
				Command: fmt.Sprintf("echo $(( $(cat counter) + 1 )) > counter; echo %d > out%d", i, i)})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			errs <- ws.WriteFile(context.Background(), fmt.Sprintf("direct%d", i), []byte("x"), 0o644)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got, _ := readWS(t, ws, "counter"); got != fmt.Sprintf("%d\n", n) {
		t.Errorf("counter = %q, want %d: runs were not serialised", got, n)
	}
	mustExec(t, s, "true")
	sameTree(t, s, ws)
}

func TestCloseAndDiscard(t *testing.T) {
	s, ws := newShell(t, Options{})
	writeWS(t, ws, "f", "x", 0o644)
	mustExec(t, s, "true")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if res := mustExec(t, s, "cat f"); res.Stdout != "x" || !s.Stats().Full {
		t.Errorf("after Close: %q, stats %+v", res.Stdout, s.Stats())
	}
	if err := s.Discard(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{s.WorkDir(), s.WorkDir() + ".state"} {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists (%v)", d, err)
		}
	}
	if res := mustExec(t, s, "cat f"); res.Stdout != "x" {
		t.Errorf("after Discard: %q", res.Stdout)
	}
}

func TestDefaultWorkDir(t *testing.T) {
	needBwrap(t)
	_, ws := newWorkspace(t)
	s := New(ws, Options{Mode: ModeCopy})
	t.Cleanup(func() { s.Discard() })
	if filepath.Dir(s.WorkDir()) != defaultBase() {
		t.Fatalf("WorkDir = %s", s.WorkDir())
	}
	writeWS(t, ws, "f", "x", 0o644)
	if res := mustExec(t, s, "cat f"); res.Stdout != "x" {
		t.Errorf("cat f = %q", res.Stdout)
	}
	want := fs.FileMode(0o700)
	if hostUIDs() {
		want = 0o710 // searchable by the sandbox's host uids
	}
	fi, err := os.Stat(defaultBase())
	if err != nil || fi.Mode().Perm() != want {
		t.Errorf("base dir %v, %v; want mode %v", fi, err, want)
	}
}

func TestPrivateDirRefusesPlantedLinks(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{open, link} {
		if err := privateDir(d); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("privateDir(%s) = %v, want fs.ErrPermission", d, err)
		}
	}
	if err := privateDir(filepath.Join(dir, "new")); err != nil {
		t.Errorf("privateDir of a new directory: %v", err)
	}
}

// TestWatcherFallbacks checks the runs whose watcher cannot tell what
// changed: a queue overflow, and a watcher evicted by other work dirs.
func TestWatcherFallbacks(t *testing.T) {
	s, ws := newShell(t, Options{})
	t.Cleanup(func() { s.Close() })
	writeWS(t, ws, "keep", "k", 0o644)
	mustExec(t, s, "true")
	if st := s.Stats(); st.Walked {
		t.Fatalf("second run walked: %+v", st)
	}
	// More events than the inotify queue holds (16384 by default).
	res := mustExec(t, s, "for i in $(seq 9000); do : > f$i; done && rm f* && echo new > keep")
	if !s.Stats().Walked {
		t.Errorf("after an overflow the scan did not walk: %+v", s.Stats())
	}
	if !slices.Equal(res.Changed, []provider.Change{{Path: "keep", Op: opModified}}) {
		t.Errorf("Changed = %v", res.Changed)
	}
	sameTree(t, s, ws)

	old := maxWatchers
	maxWatchers = 1
	t.Cleanup(func() { maxWatchers = old })
	other, ows := newShell(t, Options{})
	t.Cleanup(func() { other.Close() })
	for i := range 3 {
		writeWS(t, ws, "keep", fmt.Sprint("ws", i), 0o644)
		writeWS(t, ows, "o", fmt.Sprint("other", i), 0o644)
		mustExec(t, s, fmt.Sprintf("echo s%d > s", i))
		mustExec(t, other, fmt.Sprintf("echo o%d > o2", i))
		if s.Stats().Walked || other.Stats().Walked {
			t.Errorf("run %d walked: %+v %+v", i, s.Stats(), other.Stats())
		}
		sameTree(t, s, ws)
		sameTree(t, other, ows)
	}
}

// TestReuseKeptWorkDir: a new process (Close forgets the manifest) keeps
// the entries of the kept work dir that match the workspace and rewrites
// the others.
func TestReuseKeptWorkDir(t *testing.T) {
	s, ws := newShell(t, Options{})
	for i := range 20 {
		writeWS(t, ws, fmt.Sprintf("d/f%d", i), fmt.Sprint("file", i), 0o644)
	}
	ws.Symlink(context.Background(), "d/f1", "link")
	mustExec(t, s, "true")
	s.Close()
	// Unknown to the next process: same size, another mtime; and a link
	// retargeted.
	f := filepath.Join(s.WorkDir(), "d", "f3")
	os.WriteFile(f, []byte("FILE3"), 0o644)
	os.Remove(filepath.Join(s.WorkDir(), "link"))
	os.Symlink("d/f2", filepath.Join(s.WorkDir(), "link"))
	mustExec(t, s, "true")
	if st := s.Stats(); !st.Full || st.Reused != 19 || st.Written != 1 || st.Links != 1 {
		t.Errorf("stats %+v, want 19 entries reused, f3 rewritten and the link remade", st)
	}
	sameTree(t, s, ws)
}
