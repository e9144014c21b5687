package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/vfs"
)

func demoCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Tour forkspace end to end on the store (created if missing)",
		Long: "Create a uniquely named workspace, write files, checkpoint, fork, edit the fork, diff\n" +
			"the fork against its parent, make a mistake and restore — printing each step. The\n" +
			"workspaces stay in the store for you to explore.",
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := a.open(c.Context(), true)
			if err != nil {
				return err
			}
			return a.demo(c.Context(), st)
		},
	}
}

// demoFiles are the first version of the demo project.
var demoFiles = []struct{ path, data string }{
	{"README.md", "# greeter\n\nSays hello.\n"},
	{"src/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"},
	{"notes/todo.txt", "- greet in more languages\n"},
}

func (a *app) demo(ctx context.Context, st *forkspace.Store) error {
	say := func(format string, args ...any) { fmt.Fprintf(a.stdout, format+"\n", args...) }
	var suffix [3]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return err
	}
	name := "demo-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(suffix[:])
	dir, _ := filepath.Abs(a.storeDir)
	say("forkspace demo, store %s\n", dir)

	w, err := st.Create(ctx, name, forkspace.CreateOptions{})
	if err != nil {
		return err
	}
	say("1. created workspace %s", name)
	for _, f := range demoFiles {
		if err := w.MkdirAll(ctx, filepath.Dir(f.path), 0o755); err != nil {
			return err
		}
		if err := w.WriteFile(ctx, f.path, []byte(f.data), 0o644); err != nil {
			return err
		}
		say("   wrote %s (%d bytes)", f.path, len(f.data))
	}

	cp, err := w.Checkpoint(ctx, "initial")
	if err != nil {
		return err
	}
	say("2. checkpoint %s labelled %q", cp.ID, cp.Label)

	fork, err := w.Fork(ctx, name+"-fork", forkspace.ForkOptions{})
	if err != nil {
		return err
	}
	say("3. forked %s as %s (nothing copied: both share one tree)", name, fork.Name())

	if err := fork.WriteFile(ctx, "src/main.go", []byte("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n\tfmt.Println(\"bonjour\")\n}\n"), 0o644); err != nil {
		return err
	}
	if err := fork.WriteFile(ctx, "src/greet_test.go", []byte("package main\n"), 0o644); err != nil {
		return err
	}
	if err := fork.Remove(ctx, "notes/todo.txt"); err != nil {
		return err
	}
	say("4. in the fork: edited src/main.go, added src/greet_test.go, removed notes/todo.txt")

	changes, err := st.Diff(ctx, name, fork.Name(), vfs.DiffOptions{Unified: true})
	if err != nil {
		return err
	}
	say("5. forkspace diff %s --unified  (%d changes, fork vs parent):\n", fork.Name(), len(changes))
	io.WriteString(a.stdout, httpapi.FormatChanges(changes))

	if err := w.WriteFile(ctx, "README.md", []byte("oops, overwritten\n"), 0o644); err != nil {
		return err
	}
	say("\n6. in %s: overwrote README.md by mistake", name)
	if err := w.Restore(ctx, "initial"); err != nil {
		return err
	}
	readme, err := w.ReadFile(ctx, "README.md")
	if err != nil {
		return err
	}
	say("7. restored %s to checkpoint \"initial\"; README.md is back:\n%s", name, indent(string(readme)))
	parent, err := w.ReadFile(ctx, "src/main.go")
	if err != nil {
		return err
	}
	say("   the parent's src/main.go never saw the fork's edit (%d bytes)\n", len(parent))
	say("Explore:  forkspace --store %s -w %s ls -l src", a.storeDir, fork.Name())
	say("          forkspace --store %s diff %s@initial %s", a.storeDir, name, fork.Name())
	say("          forkspace --store %s workspace list", a.storeDir)
	return nil
}

// indent prefixes each line of s for display.
func indent(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString("   | " + line)
	}
	return b.String()
}
