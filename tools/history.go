package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/forkspace/forkspace/provider"
)

type historyIn struct {
	Limit int `json:"limit,omitempty" bounds:"0,200" jsonschema:"how many recent steps (default 20)"`
}

// historyOut is the history tool's structured result.
type historyOut struct {
	Steps []provider.Step `json:"steps" jsonschema:"the workspace's audited calls, newest first"`
}

// maxHistoryPaths caps the changed paths the text lists per step.
const maxHistoryPaths = 5

func (s *Set) addHistoryTool() {
	addStructured(s, readOnly, "history", "List this workspace's recent steps (every call that changed it, newest first) "+
		"with the paths each changed and the state it left: pass that state (~N, N steps back, or audit:SEQ) to diff "+
		"as from or to, or to restore as the checkpoint, to see or go back to any step.", historyTool)
}

func historyTool(ctx context.Context, c *call, in historyIn) (string, historyOut, error) {
	h, ok := c.ws.Snapshots().(provider.Historian)
	if !ok {
		return "", historyOut{}, argError("this workspace keeps no history of its steps")
	}
	limit := in.Limit
	if limit == 0 {
		limit = 20
	}
	steps, err := h.History(ctx, limit)
	if err != nil {
		return "", historyOut{}, err
	}
	if len(steps) == 0 {
		return "No recorded steps yet.", historyOut{Steps: []provider.Step{}}, nil
	}
	// A failed step's error was recorded as it was: the model sees it as
	// it sees any error, without host paths or store internals.
	for i := range steps {
		if steps[i].Error != "" {
			steps[i].Error = sanitizeText(steps[i].Error)
		}
	}
	var b strings.Builder
	b.WriteString("Steps, newest first (state: diff from/to it or restore it):\n")
	for _, s := range steps {
		state := "state no longer kept"
		if s.Back != "" {
			state = s.Back + " = " + s.State
		} else if s.State != "" {
			state = s.State
		}
		fmt.Fprintf(&b, "%s  %s  %s", state, s.Time.Format(time.RFC3339), s.Tool)
		if s.Command != "" {
			fmt.Fprintf(&b, " %q", firstLine(s.Command))
		}
		if s.Error != "" {
			fmt.Fprintf(&b, "  failed (nothing changed): %s", s.Error)
		}
		if len(s.Changed) > 0 {
			b.WriteString("  changed: " + strings.Join(s.Changed[:min(len(s.Changed), maxHistoryPaths)], ", "))
			if n := len(s.Changed) - maxHistoryPaths; n > 0 {
				fmt.Fprintf(&b, " and %d more", n)
			}
		}
		b.WriteByte('\n')
	}
	return b.String(), historyOut{Steps: steps}, nil
}

// stepRef reports whether a checkpoint name has the form of a recorded
// step (~N, audit:SEQ, a time), which a missing checkpoint's message
// should not list checkpoints for.
func stepRef(name string) bool {
	return strings.HasPrefix(name, "~") || strings.HasPrefix(name, "audit:") ||
		len(name) >= 5 && name[4] == '-' && strings.Trim(name[:4], "0123456789") == ""
}

// firstLine is s up to its first newline, marked when cut.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// commandOf is the shell command a call's arguments run, recorded in its
// audit entry ("" for calls other than exec).
func commandOf(in any) string {
	if e, ok := in.(execIn); ok {
		return e.Command
	}
	return ""
}
