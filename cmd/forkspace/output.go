package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/forkspace/forkspace/vfs"
)

// printJSON writes v as indented JSON and a newline.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table returns a writer aligning tab-separated columns; flush it.
func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// entryJSON is the JSON shape of a file entry (ls --json, stat --json).
type entryJSON struct {
	Name   string    `json:"name"`
	Path   string    `json:"path"`
	Type   string    `json:"type"` // "file", "dir" or "symlink"
	Mode   string    `json:"mode"` // octal permission and special bits, e.g. "0644"
	Size   int64     `json:"size"`
	Mtime  time.Time `json:"mtime"`
	Atime  time.Time `json:"atime"`
	Ctime  time.Time `json:"ctime"`
	Ino    uint64    `json:"ino"`
	Nlink  uint32    `json:"nlink"`
	UID    uint32    `json:"uid"`
	GID    uint32    `json:"gid"`
	Target string    `json:"target,omitempty"` // symlink target

	mode fs.FileMode
}

// newEntry describes fi found at path p (target: a symlink's target).
func newEntry(p string, fi fs.FileInfo, target string) entryJSON {
	e := entryJSON{
		Name: fi.Name(), Path: p, Type: typeName(fi.Mode()), Mode: octal(fi.Mode()),
		Size: fi.Size(), Mtime: fi.ModTime().UTC(), Target: target, mode: fi.Mode(),
	}
	if a, ok := fi.Sys().(*vfs.Attr); ok {
		e.Atime, e.Ctime = a.Atime.UTC(), a.Ctime.UTC()
		e.Ino, e.Nlink, e.UID, e.GID = a.Ino, a.Nlink, a.Uid, a.Gid
	}
	return e
}

func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "file"
}

// octal formats the permission and special bits the Unix way ("4755").
func octal(m fs.FileMode) string { return fmt.Sprintf("%04o", vfs.UnixMode(m)) }

// modeString formats a mode like ls -l ("drwxr-xr-x").
func modeString(m fs.FileMode) string {
	b := []byte("-rwxrwxrwx")
	switch {
	case m.IsDir():
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	}
	for i := range 9 {
		if m&(1<<(8-i)) == 0 {
			b[i+1] = '-'
		}
	}
	special := func(set bool, i int, on, off byte) {
		if set {
			if b[i] == '-' {
				b[i] = off
			} else {
				b[i] = on
			}
		}
	}
	special(m&fs.ModeSetuid != 0, 3, 's', 'S')
	special(m&fs.ModeSetgid != 0, 6, 's', 'S')
	special(m&fs.ModeSticky != 0, 9, 't', 'T')
	return string(b)
}

func size(n int64) string { return humanize.IBytes(uint64(max(n, 0))) }

// when formats a time for tables, in local time.
func when(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }
