package vfs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// crashDirEnv names the store directory a crash child writes to.
const crashDirEnv = "FORKSPACE_VFS_CRASH_DIR"

// TestCrash kills a writer process with SIGKILL mid-stream and checks
// that every write it acknowledged (WriteFile returned, or a handle's Sync
// returned) is there after reopening the store.
func TestCrash(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(t, dir)
		return
	}
	e := newEnv(t, vfs.Options{FoldRows: 50})
	must(t, e.deps.Meta.Close())
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrash$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+e.dir)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	acked := map[string]string{}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for lines < 400 && sc.Scan() {
		if name, data, ok := strings.Cut(sc.Text(), "="); ok && strings.HasPrefix(name, "ack ") {
			acked[strings.TrimPrefix(name, "ack ")] = data
			lines++
		}
	}
	must(t, cmd.Process.Kill())
	_ = cmd.Wait()
	if lines < 400 {
		t.Fatalf("child acknowledged only %d writes", lines)
	}
	e.connect()
	f := e.open(e.ws)
	ctx := context.Background()
	// The child may have committed more than it printed: a file holds its
	// acknowledged version or a later one.
	for name, want := range acked {
		got, err := f.ReadFile(ctx, name)
		must(t, err)
		if name == "log" {
			if !strings.HasPrefix(string(got), want) {
				t.Fatalf("acknowledged log %q, after the crash %q", want, got)
			}
			continue
		}
		var w, g int
		if _, err := fmt.Sscanf(want, "v%d", &w); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscanf(string(got), "v%d", &g); err != nil || g < w {
			t.Fatalf("acknowledged %s=%q, after the crash %q %v", name, want, got, err)
		}
	}
}

// crashChild writes until killed, printing each acknowledged write.
func crashChild(t *testing.T, dir string) {
	e := &env{t: t, dir: dir, opts: vfs.Options{FoldRows: 50}}
	e.connect()
	f := e.open(&meta.Workspace{ID: "ws1"})
	ctx := context.Background()
	h, err := f.Create(ctx, "log")
	must(t, err)
	var log strings.Builder
	for i := 0; ; i++ {
		name := fmt.Sprintf("f%d", i%200)
		data := fmt.Sprintf("v%d", i)
		must(t, f.WriteFile(ctx, name, []byte(data), 0o644))
		fmt.Printf("ack %s=%s\n", name, data)
		line := fmt.Sprintf("line %d;", i)
		_, err := h.Write([]byte(line))
		must(t, err)
		log.WriteString(line)
		if i%7 == 0 {
			must(t, h.Sync())
			fmt.Printf("ack log=%s\n", log.String())
		}
		if i > 100000 {
			time.Sleep(time.Second) // wait to be killed
		}
	}
}
