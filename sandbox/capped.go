package sandbox

import (
	"fmt"
	"strings"
)

// capped keeps the first max bytes written to it and counts the rest.
// Writes never fail, so a command producing huge output is not stopped by a
// broken pipe; the caller's timeout bounds how long it runs.
type capped struct {
	max     int
	buf     []byte
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	n := min(len(p), c.max-len(c.buf))
	c.buf = append(c.buf, p[:n]...)
	c.dropped += int64(len(p) - n)
	return len(p), nil
}

// String returns the kept bytes (invalid UTF-8 replaced), followed by
// the truncation marker when bytes were dropped.
func (c *capped) String() string {
	s := strings.ToValidUTF8(string(c.buf), "\uFFFD")
	if c.dropped > 0 {
		s += fmt.Sprintf("\n[output truncated: %d more bytes]\n", c.dropped)
	}
	return s
}
