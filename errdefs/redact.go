package errdefs

import "regexp"

// hostPath matches an absolute path in an error text: messages about a
// workspace name its paths relative to its root, so an absolute one is
// the host's (a blob's temporary file, the database).
var hostPath = regexp.MustCompile(`(^|[\s"'(=\[])/[^\s"':,;()\[\]]+`)

// Redact returns an error text fit to show someone not on the store's
// host (a model, a client of the server): host paths replaced by
// "<host path>".
func Redact(msg string) string {
	return hostPath.ReplaceAllString(msg, "${1}<host path>")
}
