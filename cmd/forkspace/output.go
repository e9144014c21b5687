package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
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
