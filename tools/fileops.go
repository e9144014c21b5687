package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/forkspace/forkspace/provider"
)

type statIn struct {
	Path string `json:"path" jsonschema:"workspace-relative path"`
}

type rmIn struct {
	Path      string `json:"path" jsonschema:"workspace-relative path of the file or directory to remove"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"remove a directory and everything in it"`
}

type mkdirIn struct {
	Path    string `json:"path" jsonschema:"workspace-relative path of the directory to create"`
	Parents bool   `json:"parents,omitempty" jsonschema:"also create missing parent directories, and succeed if the directory exists"`
}

type mvIn struct {
	From string `json:"from" jsonschema:"workspace-relative path to move"`
	To   string `json:"to" jsonschema:"new workspace-relative path (replaced if it is a file)"`
}

// fsOf returns the workspace's file module or a tool error.
func (c *call) fsOf() (provider.FS, error) {
	f := c.ws.FS()
	if f == nil {
		return nil, argError("this workspace has no file access (no fs module)")
	}
	return f, nil
}

// fsPath returns the file module and the cleaned workspace path of a
// tool's path argument.
func (c *call) fsPath(path string) (provider.FS, string, error) {
	f, err := c.fsOf()
	if err != nil {
		return nil, "", err
	}
	p, err := clean(path)
	if err != nil {
		return nil, "", err
	}
	return f, p, nil
}

func (s *Set) addFileTools() {
	add(s, readOnly, "read", "Read a text file of the workspace. Returns numbered lines (line number, tab, text); "+
		"long files come in pages: pass offset (first line, 1-based) and limit (number of lines) to read more. "+
		"Binary files are described, not shown.", readTool)
	add(s, mutating, "write", "Create or replace a file with the given content (parent directories are created).", writeTool)
	add(s, mutating, "edit", "Edit a text file by exact replacements: each edit's old_text must occur exactly once in the file "+
		"(include surrounding lines to make it unique). Edits apply in order, all or none. Returns a unified diff.", editTool)
	add(s, readOnly, "ls", "List a directory: one entry per line, directories end with '/', files show their size. "+
		"Paginated with offset and limit.", lsTool)
	add(s, readOnly, "stat", "Describe one path: type, size, permissions and modification time.", statTool)
	add(s, mutating, "rm", "Remove a file, or a directory with recursive=true.", rmTool)
	add(s, mutating, "mkdir", "Create a directory (with parents=true, also its missing parents).", mkdirTool)
	add(s, mutating, "mv", "Move or rename a file or directory.", mvTool)
}

func statTool(ctx context.Context, c *call, in statIn) (string, error) {
	f, p, err := c.fsPath(in.Path)
	if err != nil {
		return "", err
	}
	fi, err := f.Lstat(ctx, p)
	if err != nil {
		return "", c.fail(ctx, p, err)
	}
	return fmt.Sprintf("path: %s\ntype: %s\nsize: %d\nmode: %s\nmodified: %s",
		display(p), typeName(fi.Mode()), fi.Size(), fi.Mode().Perm(), fi.ModTime().UTC().Format(time.RFC3339)), nil
}

func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "other"
}

func rmTool(ctx context.Context, c *call, in rmIn) (string, error) {
	f, p, err := c.fsPath(in.Path)
	if err != nil {
		return "", err
	}
	if p == "." {
		return "", argError("refusing to remove the workspace root; remove its entries one by one")
	}
	fi, err := f.Lstat(ctx, p)
	if err != nil {
		return "", c.fail(ctx, p, err)
	}
	if fi.IsDir() && !in.Recursive {
		entries, err := f.ReadDir(ctx, p)
		if err != nil {
			return "", c.fail(ctx, p, err)
		}
		if len(entries) > 0 {
			return "", argError("%s is a directory with %d entries; pass recursive=true to remove it with everything in it", p, len(entries))
		}
	}
	if in.Recursive {
		err = f.RemoveAll(ctx, p)
	} else {
		err = f.Remove(ctx, p)
	}
	if err != nil {
		return "", c.fail(ctx, p, err)
	}
	c.changes(p)
	return "removed " + p, nil
}

func mkdirTool(ctx context.Context, c *call, in mkdirIn) (string, error) {
	f, p, err := c.fsPath(in.Path)
	if err != nil {
		return "", err
	}
	if in.Parents {
		err = f.MkdirAll(ctx, p, 0o755)
	} else {
		err = f.Mkdir(ctx, p, 0o755)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", argError("parent directory of %s does not exist; pass parents=true to create it", p)
	}
	if err != nil {
		return "", c.fail(ctx, p, err)
	}
	c.changes(p)
	return "created directory " + display(p), nil
}

func mvTool(ctx context.Context, c *call, in mvIn) (string, error) {
	f, from, err := c.fsPath(in.From)
	if err != nil {
		return "", err
	}
	to, err := clean(in.To)
	if err != nil {
		return "", err
	}
	if from == "." || to == "." {
		return "", argError("cannot move the workspace root")
	}
	if _, err := f.Lstat(ctx, from); err != nil {
		return "", c.fail(ctx, from, err)
	}
	if err := f.Rename(ctx, from, to); err != nil {
		if dir := path.Dir(to); errors.Is(err, fs.ErrNotExist) && dir != "." {
			// from exists, so what is missing is to's directory.
			return "", argError("cannot move %s to %s: %s", short(from), short(to), c.fail(ctx, dir, err))
		}
		return "", c.fail(ctx, to, err)
	}
	c.changes(from, to)
	return fmt.Sprintf("moved %s to %s", short(from), short(to)), nil
}
