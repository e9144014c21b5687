package audit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/audit"
)

func TestDigestCanonical(t *testing.T) {
	type args struct {
		B int    `json:"b"`
		A string `json:"a"`
	}
	tests := []struct {
		name string
		x, y any
		same bool
	}{
		{"struct and map with keys in another order", args{B: 1, A: "x"}, map[string]any{"a": "x", "b": 1}, true},
		{"nested maps", map[string]any{"z": map[string]int{"b": 2, "a": 1}}, map[string]any{"z": map[string]int{"a": 1, "b": 2}}, true},
		{"different value", args{B: 1}, args{B: 2}, false},
		{"large numbers kept exact", map[string]any{"n": uint64(1<<63 + 1)}, map[string]any{"n": uint64(1<<63 + 2)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dx, err := audit.Digest(tc.x)
			if err != nil {
				t.Fatal(err)
			}
			dy, err := audit.Digest(tc.y)
			if err != nil {
				t.Fatal(err)
			}
			if (dx == dy) != tc.same || len(dx) != 64 {
				t.Errorf("Digest = %s, %s; want same=%v (64 hex digits)", dx, dy, tc.same)
			}
		})
	}
	if d, err := audit.Digest(nil); d != "" || err != nil {
		t.Errorf("Digest(nil) = %q, %v; want empty", d, err)
	}
	if _, err := audit.Digest(func() {}); err == nil {
		t.Error("Digest of a func: no error")
	}
}

// recorder keeps entries in memory.
type recorder struct {
	mu      sync.Mutex
	entries []audit.Entry
	err     error
}

func (r *recorder) Record(ctx context.Context, e audit.Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
	return r.err
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		fnErr      error
		cpErr      error
		recErr     error
		cancel     bool
		wantErr    []error
		wantRan    bool
		wantOutErr string
		wantCP     string
	}{
		{name: "ok", wantRan: true, wantCP: "cp-1"},
		{name: "call fails", fnErr: boom, wantErr: []error{boom}, wantRan: true, wantOutErr: "boom", wantCP: "cp-1"},
		{name: "checkpoint fails", cpErr: boom, wantErr: []error{boom}, wantOutErr: "checkpoint before write: boom"},
		{name: "recording fails", recErr: boom, wantErr: []error{boom}, wantRan: true, wantCP: "cp-1"},
		{name: "cancelled context still recorded", cancel: true, wantRan: true, wantCP: "cp-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{err: tc.recErr}
			ctx := audit.WithActor(t.Context(), audit.Actor{Name: "alice", Session: "s1"})
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			ran := false
			call := audit.Call{WorkspaceID: "ws-1", Tool: "write", Args: map[string]string{"path": "a"},
				Checkpoint: func(_ context.Context, label string) (string, error) {
					if label != audit.Label("write") {
						t.Errorf("checkpoint label %q", label)
					}
					return "cp-1", tc.cpErr
				}}
			err := audit.Run(ctx, r, call, func(context.Context) ([]string, error) {
				ran = true
				if tc.cancel {
					cancel()
				}
				return []string{"a"}, tc.fnErr
			})
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("Run = %v, want %v", err, want)
				}
			}
			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("Run = %v", err)
			}
			if ran != tc.wantRan {
				t.Errorf("ran = %v, want %v", ran, tc.wantRan)
			}
			if len(r.entries) != 1 {
				t.Fatalf("recorded %d entries, want 1", len(r.entries))
			}
			e := r.entries[0]
			d, _ := audit.Digest(call.Args)
			if e.Actor != "alice" || e.Session != "s1" || e.WorkspaceID != "ws-1" || e.Tool != "write" ||
				e.ArgsDigest != d || e.Error != tc.wantOutErr || e.Checkpoint != tc.wantCP {
				t.Errorf("entry = %+v", e)
			}
			if tc.wantRan && (len(e.Changed) != 1 || e.Duration <= 0) {
				t.Errorf("entry changed %v duration %v", e.Changed, e.Duration)
			}
		})
	}
}

func TestRunWithoutRecorder(t *testing.T) {
	err := audit.Run(t.Context(), nil, audit.Call{Tool: "x"}, func(context.Context) ([]string, error) {
		return nil, errors.New("plain")
	})
	if err == nil || !strings.Contains(err.Error(), "plain") {
		t.Errorf("Run = %v", err)
	}
}
