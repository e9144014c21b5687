package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3test"
)

// TestServeSeveralNodes runs three serve processes on one PostgreSQL
// database and one bucket (versitygw), as a deployment's nodes behind a
// load balancer: clients write to one workspace through whichever node,
// one node is killed with SIGKILL mid-write, and afterwards every node
// left — and a replacement started after the kill — serves, for every
// path, the last write acknowledged to its client (or a later one whose
// answer the kill lost), never an older one, and a fork made on one node
// is read on another.
func TestServeSeveralNodes(t *testing.T) {
	db := pgtest.DB(t)
	v := s3test.StartVersity(t, "nodes")
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	blobURL := "s3://nodes/store?endpoint=" + v.Direct + "&region=" + s3test.Region + "&path_style=true"
	root := t.TempDir()
	type node struct {
		kill func()
		api  *httpapi.Client
	}
	start := func(i int) node {
		global := []string{"--store", filepath.Join(root, fmt.Sprint("node", i)), "--meta", db, "--blob", blobURL}
		cmd, url, stop := serveProcess(t, global)
		t.Cleanup(stop)
		api, err := httpapi.NewClient(strings.TrimSuffix(url, "/mcp"), httpapi.ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return node{api: api, kill: func() { cmd.Process.Signal(syscall.SIGKILL); cmd.Wait() }}
	}
	nodes := []node{start(0), start(1), start(2)}
	ctx := context.Background()
	if _, err := nodes[0].api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "shared"}); err != nil {
		t.Fatal(err)
	}

	// Each client owns its paths and writes versions of them in turn,
	// each write through a random live node.
	const clients, paths = 6, 5
	var (
		mu     sync.Mutex
		killed = map[int]bool{}
		acks   [3]int // acknowledged writes per node
		lost   int    // writes the kill left unanswered
	)
	type record struct{ acked, tried int } // per path: last acknowledged, last attempted version
	records := make([][paths]record, clients)
	body := func(c, p, version int) string {
		s := fmt.Sprintf("client %d path %d version %d\n", c, p, version)
		if version%4 == 0 { // past the inline limit: bytes in the bucket
			s += strings.Repeat(s, (20<<10)/len(s))
		}
		return s
	}
	stopWriting := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for version := 1; ; version++ {
				select {
				case <-stopWriting:
					return
				default:
				}
				p := rng.IntN(paths)
				n := rng.IntN(len(nodes))
				mu.Lock()
				dead := killed[n]
				mu.Unlock()
				if dead {
					continue
				}
				records[c][p].tried = version
				_, err := nodes[n].api.Write(ctx, "shared", fmt.Sprintf("c%d-p%d", c, p), strings.NewReader(body(c, p, version)), httpapi.WriteRequest{})
				mu.Lock()
				dead = killed[n]
				mu.Unlock()
				switch {
				case err == nil:
					records[c][p].acked = version
					mu.Lock()
					acks[n]++
					mu.Unlock()
				case dead:
					mu.Lock()
					lost++
					mu.Unlock()
				default:
					t.Errorf("client %d: write through node %d: %v", c, n, err)
					return
				}
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	killed[1] = true
	mu.Unlock()
	nodes[1].kill()
	time.Sleep(1500 * time.Millisecond)
	close(stopWriting)
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("acknowledged writes per node %v; %d writes lost their answer to the kill", acks, lost)
	if acks[0] == 0 || acks[1] == 0 || acks[2] == 0 {
		t.Fatalf("a node acknowledged no write (%v): the test did not spread its writes", acks)
	}

	nodes[1] = start(3) // a replacement, on a fresh store directory
	for i, n := range nodes {
		for c := range clients {
			for p := range paths {
				r := records[c][p]
				if r.tried == 0 {
					continue
				}
				name := fmt.Sprintf("c%d-p%d", c, p)
				d, err := n.api.Open(ctx, "shared", name, httpapi.ReadRequest{Length: -1})
				if err != nil {
					if r.acked == 0 && errors.Is(err, fs.ErrNotExist) {
						continue // never acknowledged, and the attempt was lost
					}
					t.Errorf("node %d: %s: %v", i, name, err)
					continue
				}
				got, err := io.ReadAll(d)
				d.Close()
				if err != nil {
					t.Fatal(err)
				}
				var version int
				if _, err := fmt.Sscanf(string(got), "client %d path %d version %d\n", new(int), new(int), &version); err != nil || string(got) != body(c, p, version) {
					t.Errorf("node %d: %s holds %.40q: not one whole write", i, name, got)
					continue
				}
				if version < r.acked || version > r.tried {
					t.Errorf("node %d: %s holds version %d; acknowledged %d, last attempted %d", i, name, version, r.acked, r.tried)
				}
			}
		}
	}

	// A fork made through one node is served by another, and its writes
	// stay out of its parent on every node.
	if _, err := nodes[2].api.ForkWorkspace(ctx, "shared", httpapi.ForkRequest{Name: "fork"}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].api.Write(ctx, "fork", "only-in-fork", strings.NewReader("f"), httpapi.WriteRequest{}); err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		if _, err := n.api.Stat(ctx, "fork", "only-in-fork"); err != nil {
			t.Errorf("node %d: the fork's file: %v", i, err)
		}
		if _, err := n.api.Stat(ctx, "shared", "only-in-fork"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("node %d: the fork's file in its parent: %v", i, err)
		}
	}
}
