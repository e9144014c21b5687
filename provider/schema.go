package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
)

// CheckSchemaVersion checks the schema version v of a Ref of providerID
// against the provider's current version. It accepts an absent version
// (a legacy ref), the previous version when there is one (current−1 ≥ 1;
// logging "migrating ref from vX to vY") and current; anything else is a
// permanent *FailedError naming exactly that set. log may be nil.
func CheckSchemaVersion(v *int, providerID string, current int, log *slog.Logger) error {
	supported := supportedVersions(current)
	if v == nil || *v == current {
		return nil
	}
	if *v == current-1 && *v >= 1 {
		if log == nil {
			log = slog.Default()
		}
		log.Info(fmt.Sprintf("migrating ref from v%d to v%d", *v, current), "provider", providerID)
		return nil
	}
	names := make([]string, len(supported))
	for i, s := range supported {
		names[i] = fmt.Sprintf("v%d", s)
	}
	return &FailedError{
		Workspace: providerID,
		Err:       fmt.Errorf("unsupported ref schema version %d: this build reads %s or none (legacy)", *v, strings.Join(names, ", ")),
	}
}

// supportedVersions are the explicit versions CheckSchemaVersion accepts:
// the previous one (versions start at 1) and current.
func supportedVersions(current int) []int {
	if current-1 >= 1 {
		return []int{current - 1, current}
	}
	return []int{current}
}

// Version returns a pointer to v, for Ref.SchemaVersion.
func Version(v int) *int { return &v }

// refJSON is a Ref as JSON: the seed's spelling "schemaVersion" is
// accepted as well as "schema_version".
type refJSON struct {
	ProviderID    string          `json:"provider_id"`
	Payload       json.RawMessage `json:"ref"`
	Capabilities  Capabilities    `json:"capabilities"`
	SchemaVersion *int            `json:"schema_version,omitempty"`
	SeedVersion   *int            `json:"schemaVersion,omitempty"`
}

// UnmarshalJSON decodes a Ref strictly: an unknown key, or both spellings
// of the schema version with different values, is fs.ErrInvalid.
func (r *Ref) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var j refJSON
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("decode ref: %w: %w", fs.ErrInvalid, err)
	}
	v := j.SchemaVersion
	switch {
	case v == nil:
		v = j.SeedVersion
	case j.SeedVersion != nil && *j.SeedVersion != *v:
		return fmt.Errorf("decode ref: %w: schema_version %d and schemaVersion %d disagree", fs.ErrInvalid, *v, *j.SeedVersion)
	}
	*r = Ref{ProviderID: j.ProviderID, Payload: j.Payload, Capabilities: j.Capabilities, SchemaVersion: v}
	return nil
}
