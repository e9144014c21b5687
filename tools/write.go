package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/forkspace/forkspace/internal/textdiff"
	"github.com/forkspace/forkspace/provider"
)

type writeIn struct {
	Path    string `json:"path" jsonschema:"workspace-relative path of the file"`
	Content string `json:"content" jsonschema:"the complete new content of the file (over MCP one request carries at most 4 MiB in all)"`
}

type editIn struct {
	Path  string     `json:"path" jsonschema:"workspace-relative path of the file"`
	Edits []editSpec `json:"edits" jsonschema:"replacements, applied in order; all succeed or none is applied"`
}

type editSpec struct {
	OldText string `json:"old_text" jsonschema:"exact text to replace; must occur exactly once in the file"`
	NewText string `json:"new_text" jsonschema:"replacement text"`
}

func writeTool(ctx context.Context, c *call, in writeIn) (string, error) {
	f, p, err := c.fsPath(in.Path)
	if err != nil {
		return "", err
	}
	if p == "." {
		return "", argError("path must name a file, not the workspace root")
	}
	defer c.set.lock(c.ws.ID(), p)()
	verb := "replaced"
	undo := func() {}
	fi, err := f.Stat(ctx, p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		verb = "created"
		if undo, err = mkdirParents(ctx, f, p); err != nil {
			return "", c.fail(ctx, path.Dir(p), err)
		}
	case err != nil:
		return "", c.fail(ctx, p, err)
	case fi.IsDir():
		return "", argError("%s is a directory; choose a file path", p)
	}
	perm := fs.FileMode(0o644)
	if fi != nil {
		perm = fi.Mode().Perm()
	}
	if err := f.WriteFile(ctx, p, []byte(in.Content), perm); err != nil {
		undo()
		return "", c.fail(ctx, p, err)
	}
	c.changes(p)
	return fmt.Sprintf("%s %s (%d bytes, %d lines)", verb, p, len(in.Content), lineCount(in.Content)), nil
}

// mkdirParents creates the missing parent directories of file p and
// returns undo, which removes those it created (deepest first, each only
// if still empty), so a write that then fails leaves no directory behind.
func mkdirParents(ctx context.Context, f provider.FS, p string) (undo func(), err error) {
	var missing []string
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if _, err := f.Stat(ctx, dir); err == nil {
			break
		}
		missing = append(missing, dir)
	}
	undo = func() {
		for _, dir := range missing {
			_ = f.Remove(context.WithoutCancel(ctx), dir) // best effort: never removes content
		}
	}
	if len(missing) == 0 {
		return undo, nil
	}
	if err := f.MkdirAll(ctx, missing[0], 0o755); err != nil {
		undo()
		return nil, err
	}
	return undo, nil
}

func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}

func editTool(ctx context.Context, c *call, in editIn) (string, error) {
	f, p, err := c.fsPath(in.Path)
	if err != nil {
		return "", err
	}
	if len(in.Edits) == 0 {
		return "", argError("no edits given; pass edits=[{old_text, new_text}, …]")
	}
	defer c.set.lock(c.ws.ID(), p)()
	fi, err := f.Stat(ctx, p)
	if err != nil {
		return "", c.fail(ctx, p, err)
	}
	if fi.IsDir() {
		return "", argError("%s is a directory; edit takes a file", p)
	}
	data, err := f.ReadFile(ctx, p)
	if err != nil {
		return "", c.fail(ctx, p, err)
	}
	if isBinary(data) {
		return "", argError("%s is a binary file; edit changes text files only (use write to replace it)", p)
	}
	old := string(data)
	text, err := applyEdits(p, old, in.Edits)
	if err != nil {
		return "", err
	}
	if text == old {
		return "", argError("the edits leave %s unchanged; nothing was written", p)
	}
	if err := f.WriteFile(ctx, p, []byte(text), fi.Mode().Perm()); err != nil {
		return "", c.fail(ctx, p, err)
	}
	c.changes(p)
	diff := strings.TrimSuffix(textdiff.Unified("a/"+p, "b/"+p, old, text), "\n")
	return fmt.Sprintf("edited %s (%d edits)\n%s", p, len(in.Edits), diff), nil
}

// applyEdits applies edits in order to text; each old text must occur
// exactly once in the text as it is when the edit applies. It fails on the
// first bad edit, naming it, and then nothing is applied.
func applyEdits(p, text string, edits []editSpec) (string, error) {
	for i, e := range edits {
		n := i + 1
		if e.OldText == "" {
			return "", argError("edit %d: old_text is empty; give the exact text to replace (no edit was applied)", n)
		}
		switch count := strings.Count(text, e.OldText); count {
		case 1:
			text = strings.Replace(text, e.OldText, e.NewText, 1)
		case 0:
			hint := ""
			if strings.Contains(strings.ToLower(text), strings.ToLower(e.OldText)) {
				hint = " (it occurs with different letter case)"
			} else if strings.Contains(collapse(text), collapse(e.OldText)) {
				hint = " (it occurs with different whitespace; copy it exactly, e.g. from read output without the line numbers)"
			}
			return "", argError("edit %d: old_text not found in %s%s; no edit was applied", n, p, hint)
		default:
			return "", argError("edit %d: old_text occurs %d times in %s; include more surrounding lines to make it unique (no edit was applied)", n, count, p)
		}
	}
	return text, nil
}

// collapse squeezes runs of whitespace to one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
