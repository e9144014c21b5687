package tools

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

type readIn struct {
	Path   string `json:"path" jsonschema:"workspace-relative path of the file"`
	Offset int    `json:"offset,omitempty" bounds:"0,1000000000" jsonschema:"first line to return, 1-based (default 1)"`
	Limit  int    `json:"limit,omitempty" bounds:"0,1000000" jsonschema:"number of lines to return (default 2000)"`
}

// maxLine caps one line of read output; longer lines are cut with a marker.
const maxLine = 2000

// maxReadFile is the largest file read loads (it reads whole files); a
// variable so tests can lower it.
var maxReadFile int64 = 64 << 20

// binarySniff is how much of a file binary detection looks at.
const binarySniff = 8 << 10

// isBinary reports whether data looks like a binary file: a NUL byte or
// invalid UTF-8 in its first bytes.
func isBinary(data []byte) bool {
	head := data[:min(len(data), binarySniff)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if len(data) > binarySniff {
		// A multi-byte rune cut at the sniff boundary is not evidence.
		for i := 0; i < utf8.UTFMax-1 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

func readTool(ctx context.Context, c *call, in readIn) (string, error) {
	f, p, err := c.fsPath(in.Path)
	if err != nil {
		return "", err
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit == 0 {
		limit = DefaultReadLines
	}
	fi, err := f.Stat(ctx, p)
	if err != nil {
		return "", c.fail(ctx, p, err)
	}
	if fi.IsDir() {
		return "", argError("%s is a directory; use ls to list it", display(p))
	}
	if fi.Size() > maxReadFile {
		return "", argError("%s is too large to read (%d bytes; the limit is %d); use grep to find the lines you need", p, fi.Size(), maxReadFile)
	}
	data, err := f.ReadFile(ctx, p)
	if err != nil {
		return "", c.fail(ctx, p, err)
	}
	if isBinary(data) {
		return fmt.Sprintf("%s is a binary file (%d bytes); its content is not shown", p, len(data)), nil
	}
	if len(data) == 0 {
		return fmt.Sprintf("%s is empty", p), nil
	}
	text := strings.TrimSuffix(string(data), "\n")
	total := strings.Count(text, "\n") + 1
	if offset > total {
		return "", argError("offset %d is past the end of %s, which has %d lines", offset, p, total)
	}
	var b strings.Builder
	line, next := 1, offset
	for rest := text; line < offset+limit && line <= total; line++ {
		l, after, _ := strings.Cut(rest, "\n")
		rest = after
		if line < offset {
			continue
		}
		if len(l) > maxLine {
			l = l[:maxLine] + fmt.Sprintf("… [line cut: %d more bytes]", len(l)-maxLine)
		}
		entry := fmt.Sprintf("%6d\t%s\n", line, l)
		if b.Len()+len(entry) > c.set.opts.MaxReadBytes && b.Len() > 0 {
			break
		}
		b.WriteString(entry)
		next = line + 1
	}
	if next <= total {
		fmt.Fprintf(&b, "… %d more lines; call read with offset=%d", total-next+1, next)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
