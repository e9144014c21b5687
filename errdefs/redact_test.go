package errdefs_test

import (
	"testing"

	"github.com/forkspace/forkspace/errdefs"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"write /srv/st/blobs/tmp/ab-1: no space left on device": "write <host path>: no space left on device",
		`open "/var/lib/forkspace/meta.db": disk I/O error`:     `open "<host path>": disk I/O error`,
		"write src/a.txt: quota exceeded":                       "write src/a.txt: quota exceeded",
		"(/tmp/x) and=/etc/y":                                   "(<host path>) and=<host path>",
	} {
		if got := errdefs.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
