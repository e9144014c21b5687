package provider

import (
	"fmt"
	"log/slog"
)

// CheckSchemaVersion checks the schema version v of a Ref of providerID
// against the provider's current version. It accepts an absent version
// (a legacy ref), current−1 (logging "migrating ref from vX to vY") and
// current; anything else is a permanent *FailedError naming the supported
// set. log may be nil.
func CheckSchemaVersion(v *int, providerID string, current int, log *slog.Logger) error {
	if v == nil || *v == current {
		return nil
	}
	if *v == current-1 {
		if log == nil {
			log = slog.Default()
		}
		log.Info(fmt.Sprintf("migrating ref from v%d to v%d", *v, current), "provider", providerID)
		return nil
	}
	supported := fmt.Sprintf("v%d, v%d or none (legacy)", current-1, current)
	if current <= 1 {
		supported = fmt.Sprintf("v%d or none (legacy)", current)
	}
	return &FailedError{
		Workspace: providerID,
		Err:       fmt.Errorf("unsupported ref schema version %d: this build reads %s", *v, supported),
	}
}

// Version returns a pointer to v, for Ref.SchemaVersion.
func Version(v int) *int { return &v }
