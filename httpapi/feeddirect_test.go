package httpapi

import (
	"testing"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/meta/memmeta"
)

// TestWritersRetire: the streams of a workspace share one set of
// writers, which stop when the last stream leaves; a stream that joins
// later starts new ones.
func TestWritersRetire(t *testing.T) {
	ctx := t.Context()
	f, err := feed.New(ctx, audit.NewLog(memmeta.New()), feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var fan fanout
	stream := func() *direct {
		c, err := f.Subscribe(ctx, f.Last(), feed.Filter{WorkspaceID: "w"})
		if err != nil {
			t.Fatal(err)
		}
		ls := &localStream{f: f, c: c, wsID: "w", names: &workspaceNames{names: map[string]string{"w": "w"}}}
		return &direct{ls: ls, ctx: ctx, kick: make(chan struct{}, 1)}
	}
	groups := func() int {
		fan.mu.Lock()
		defer fan.mu.Unlock()
		return len(fan.groups)
	}
	a, b := stream(), stream()
	g := fan.join(a)
	if fan.join(b) != g || groups() != 1 {
		t.Fatalf("two streams of one workspace: %d sets of writers", groups())
	}
	g.leave(a)
	g.leave(b)
	for deadline := time.Now().Add(10 * time.Second); groups() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the writers of a workspace without streams did not stop")
		}
	}
	c := stream()
	g2 := fan.join(c)
	if g2 == g || groups() != 1 {
		t.Fatalf("a stream after the writers stopped joined them again (or %d sets)", groups())
	}
	g2.leave(c)
}
