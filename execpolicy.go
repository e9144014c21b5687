package forkspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/meta"
)

// execPolicyKey is the setting holding workspace id's exec policy.
func execPolicyKey(id string) string { return "exec.policy." + id }

// ExecPolicy returns the workspace's exec policy (package execpolicy;
// the zero Policy when none is set): a run in it gets at most this,
// narrowed with the server's and the caller's token's.
func (w *Workspace) ExecPolicy(ctx context.Context) (execpolicy.Policy, error) {
	var p execpolicy.Policy
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		p, err = readExecPolicy(tx, w.id)
		return err
	})
	if err != nil {
		return p, fmt.Errorf("exec policy of %s: %w", w.name, err)
	}
	return p, nil
}

// SetExecPolicy replaces the workspace's exec policy (the zero Policy
// clears it). Negative limits are fs.ErrInvalid; a caller with a token
// (auth.FromContext) may set only what is within its own policy
// (fs.ErrPermission otherwise). Forks copy the policy they are forked
// under.
func (w *Workspace) SetExecPolicy(ctx context.Context, p execpolicy.Policy) error {
	err := p.Check()
	if s, ok := auth.FromContext(ctx); ok && err == nil {
		err = p.Within(s.Exec)
	}
	if err == nil {
		err = w.store.meta.Update(ctx, func(tx meta.Tx) error { return writeExecPolicy(tx, w.id, p) })
	}
	if err != nil {
		return fmt.Errorf("set exec policy of %s: %w", w.name, err)
	}
	return nil
}

// readExecPolicy reads workspace id's exec policy in tx.
func readExecPolicy(tx meta.Tx, id string) (execpolicy.Policy, error) {
	var p execpolicy.Policy
	raw, err := tx.Setting(execPolicyKey(id))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && raw == "") {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return p, fmt.Errorf("%w: %w", errdefs.ErrCorrupt, err)
	}
	return p, nil
}

// writeExecPolicy records workspace id's exec policy in tx ("" for none).
func writeExecPolicy(tx meta.Tx, id string, p execpolicy.Policy) error {
	var raw []byte
	if !p.IsZero() {
		var err error
		if raw, err = json.Marshal(p); err != nil {
			return err
		}
	}
	return tx.SetSetting(execPolicyKey(id), string(raw))
}

// copyExecPolicy gives fork to the exec policy of workspace from, so
// that forking never widens what commands may do.
func copyExecPolicy(tx meta.Tx, from, to string) error {
	p, err := readExecPolicy(tx, from)
	if err != nil || p.IsZero() {
		return err
	}
	return writeExecPolicy(tx, to, p)
}
