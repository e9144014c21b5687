package httpapi

import (
	"strings"

	"github.com/forkspace/forkspace/vfs"
)

// FormatChanges renders changes as `forkspace diff` prints them: one line
// per change ("A path", "M path", "D path", "R old -> new"; directories
// end in "/", "(hard link of P)" and "(replaced)" mark those), each
// followed by its unified diff if any.
func FormatChanges(changes []vfs.Change) string {
	var b strings.Builder
	for _, ch := range changes {
		mark := strings.ToUpper(ch.Op.String()[:1])
		name := ch.Path
		if ch.Type == "dir" {
			name += "/"
		}
		switch {
		case ch.Op == vfs.Renamed:
			name = ch.OldPath + " -> " + name
		case ch.Link != "":
			name += " (hard link of " + ch.Link + ")"
		case ch.Replaced:
			name += " (replaced)"
		}
		b.WriteString(mark + " " + name + "\n")
		if ch.Unified != "" {
			b.WriteString(ch.Unified)
			if !strings.HasSuffix(ch.Unified, "\n") {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}
