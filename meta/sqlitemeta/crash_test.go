package sqlitemeta_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
)

// crashEnv names the database a re-executed test binary writes to until it
// is killed (see crashChild).
const crashEnv = "SQLITEMETA_CRASH_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path, os.Getenv(crashEnv+"_ROUND"))
		return
	}
	os.Exit(m.Run())
}

// crashChild runs Updates from four goroutines forever. Each allocates a
// counter value and stages a row holding it; after Update returns it
// prints "key value" on one line (one write(2), so a kill never splits it).
func crashChild(path, round string) {
	s, err := sqlitemeta.Open(context.Background(), path, sqlitemeta.Options{Logger: quiet})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("r%s-g%d-%07d", round, g, i)
				var v int64
				err := s.Update(context.Background(), func(tx meta.Tx) (err error) {
					if v, err = tx.Allocate("crash", 1); err != nil {
						return err
					}
					return tx.PutStaged("id-crash", []meta.Staged{{Key: []byte(key), Value: []byte(strconv.FormatInt(v, 10)), Seq: v}})
				})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				os.Stdout.WriteString(key + " " + strconv.FormatInt(v, 10) + "\n")
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestCrash kills a writing child process at random moments with SIGKILL
// and checks after each kill that every acknowledged Update survived and
// that the counter never hands out an acknowledged value again.
func TestCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	s := openAt(t, path)
	if err := s.Update(context.Background(), func(tx meta.Tx) error {
		return tx.CreateWorkspace(&meta.Workspace{ID: "id-crash", Name: "crash"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	acked := map[string]string{}
	for round := range 5 {
		lines := runAndKill(t, path, round, time.Duration(20+rng.IntN(300))*time.Millisecond)
		if len(lines) == 0 {
			t.Fatalf("round %d: the child acknowledged nothing", round)
		}
		var maxAcked int64
		for _, l := range lines {
			key, value, ok := strings.Cut(l, " ")
			if !ok {
				t.Fatalf("round %d: malformed line %q", round, l)
			}
			acked[key] = value
			v, _ := strconv.ParseInt(value, 10, 64)
			maxAcked = max(maxAcked, v)
		}

		s := openAt(t, path)
		var rows []meta.Staged
		var next int64
		if err := s.Update(context.Background(), func(tx meta.Tx) (err error) {
			if rows, err = tx.Staged("id-crash"); err != nil {
				return err
			}
			next, err = tx.Allocate("crash", 1)
			return err
		}); err != nil {
			t.Fatalf("round %d: read after crash: %v", round, err)
		}
		stored := make(map[string]string, len(rows))
		for _, r := range rows {
			stored[string(r.Key)] = string(r.Value)
		}
		for k, v := range acked {
			if stored[k] != v {
				t.Fatalf("round %d: acknowledged row %s=%s lost after kill -9 (found %q)", round, k, v, stored[k])
			}
		}
		if next <= maxAcked {
			t.Fatalf("round %d: counter handed out %d again (acknowledged up to %d)", round, next, maxAcked)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d acknowledged rows survived a kill after %d in total", round, len(lines), len(acked))
	}
}

// runAndKill runs a crash child on path, kills it with SIGKILL delay after
// its first acknowledgement, and returns the lines it printed.
func runAndKill(t *testing.T, path string, round int, delay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s_ROUND=%d", crashEnv, round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	first := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if len(lines) == 0 {
				close(first)
			}
			lines = append(lines, sc.Text())
		}
	}()
	select {
	case <-first:
	case <-readDone:
		cmd.Wait()
		t.Fatalf("round %d: child exited early: %s", round, stderr.String())
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-readDone
	if err := cmd.Wait(); err == nil {
		t.Fatalf("round %d: child exited cleanly; want killed", round)
	}
	return lines
}
