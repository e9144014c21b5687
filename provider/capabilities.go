package provider

import (
	"fmt"
	"strings"
)

// CheckCapabilities asserts that what an agent declared is provided:
// declared ⊆ ref.Capabilities, and each declared module is non-nil on ws.
// A nil declared checks nothing. A mismatch is a permanent *FailedError
// naming the missing capabilities; name identifies the workspace.
func CheckCapabilities(name string, declared *Capabilities, ref Ref, ws Workspace) error {
	if declared == nil {
		return nil
	}
	var missing []string
	check := func(capName string, want, inRef, built bool) {
		switch {
		case !want:
		case !inRef:
			missing = append(missing, capName+" (not in the ref)")
		case !built:
			missing = append(missing, capName+" (module not built)")
		}
	}
	check("fs", declared.FS, ref.Capabilities.FS, ws.FS() != nil)
	check("shell", declared.Shell, ref.Capabilities.Shell, ws.Shell() != nil)
	check("snapshot", declared.Snapshot, ref.Capabilities.Snapshot, ws.Snapshots() != nil)
	if len(missing) == 0 {
		return nil
	}
	return &FailedError{
		Workspace: name,
		Err:       fmt.Errorf("provider %q does not provide declared capabilities: %s", ref.ProviderID, strings.Join(missing, ", ")),
	}
}
