package forkspace

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidName checks a workspace name: 1–64 letters, digits, '.', '_' or '-',
// starting with a letter or digit, and not shaped like an ID.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("workspace name %q: %w: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name, fs.ErrInvalid)
	}
	if strings.HasPrefix(name, workspacePrefix) || strings.HasPrefix(name, checkpointPrefix) {
		return fmt.Errorf("workspace name %q: %w: names starting with %q or %q are reserved for IDs", name, fs.ErrInvalid, workspacePrefix, checkpointPrefix)
	}
	return nil
}

const (
	workspacePrefix  = "ws-"
	checkpointPrefix = "cp-"
)

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// newID returns a random identifier with the given prefix.
func newID(prefix string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return prefix + idEncoding.EncodeToString(b[:])
}
