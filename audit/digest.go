package audit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/zeebo/blake3"
)

// Digest returns the hex BLAKE3 hash of the canonical JSON of args: args
// is encoded with encoding/json, decoded into generic values (numbers kept
// verbatim) and encoded again, so object keys are sorted and equal
// arguments digest equally whatever their Go type. nil digests to "".
// Values encoding/json cannot encode are an error.
func Digest(args any) (string, error) {
	if args == nil {
		return "", nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("digest arguments: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("digest arguments: %w", err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("digest arguments: %w", err)
	}
	sum := blake3.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}
