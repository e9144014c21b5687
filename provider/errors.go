package provider

import "fmt"

// FailedError means a workspace could not be opened or resolved. Transient
// failures are retried by the session manager with exponential backoff;
// others fail the session's workspace until it is closed.
type FailedError struct {
	Workspace string
	Transient bool
	Err       error
}

func (e *FailedError) Error() string {
	kind := "failed"
	if e.Transient {
		kind = "failed (transient)"
	}
	return fmt.Sprintf("workspace %s %s: %v", e.Workspace, kind, e.Err)
}

func (e *FailedError) Unwrap() error { return e.Err }

// EvictedError is returned by a module method when the workspace's backing
// resource is gone (an idle sandbox reclaimed, a temp dir cleaned): the
// session manager re-resolves the workspace from its ref and retries the
// call once.
type EvictedError struct {
	Workspace string
	Err       error
}

func (e *EvictedError) Error() string {
	return fmt.Sprintf("workspace %s evicted: %v", e.Workspace, e.Err)
}

func (e *EvictedError) Unwrap() error { return e.Err }
