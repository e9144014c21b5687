package sandbox

import (
	"bytes"
	"fmt"
	"strings"
)

// capped keeps the head and the tail of what is written to it, max bytes
// in all (half each), and counts the bytes between. Writes never fail, so
// a command producing huge output is not stopped by a broken pipe; the
// caller's timeout bounds how long it runs.
type capped struct {
	max  int
	head []byte
	// tail is a ring of the last max-max/2 bytes once the head is full;
	// end is where the next byte goes.
	tail  []byte
	end   int
	total int64 // bytes written
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	keep := c.max / 2
	if k := min(len(p), keep-len(c.head)); k > 0 {
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	size := c.max - keep
	if size == 0 {
		return n, nil
	}
	if len(p) > size {
		p = p[len(p)-size:]
	}
	for len(p) > 0 {
		if len(c.tail) < size {
			k := min(len(p), size-len(c.tail))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			c.end = len(c.tail) % size
			continue
		}
		k := copy(c.tail[c.end:], p)
		p = p[k:]
		c.end = (c.end + k) % size
	}
	return n, nil
}

// String returns the output with invalid UTF-8 replaced: whole when it
// fit, else the head, a marker saying how many bytes were cut, and the
// tail. The cut falls on line ends when the kept parts hold some, so no
// line is shown in part.
func (c *capped) String() string {
	var tail []byte
	if len(c.tail) > 0 {
		tail = append(append([]byte{}, c.tail[c.end:]...), c.tail[:c.end]...)
	}
	kept := int64(len(c.head) + len(tail))
	if kept == c.total {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	head := c.head
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	cut := c.total - int64(len(head)+len(tail))
	var b strings.Builder
	b.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[output truncated: %d bytes cut here]\n", cut)
	b.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return b.String()
}
