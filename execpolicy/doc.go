// Package execpolicy is the operator's policy for the commands exec runs:
// how much network they may have and caps on their limits. It is set at
// three levels — the server (sandbox.Options), a workspace (stored with
// the workspace's settings, forkspace.Workspace.SetExecPolicy) and a
// token (auth.Request.Exec, fixed when the token is created) — and a run
// gets the narrowest of the three (Policy.Narrow): a workspace or a token
// can only take away, never add, and a request (ExecRequest.Network,
// ExecRequest.Limits) can only ask for less than the result.
//
// Network is off, full (any address but the host's own) or an allowlist
// of host:port pairs (ParseNetwork's syntax: "off", "full",
// "registry.npmjs.org:443,proxy.golang.org:443"). The narrowest of two is
// off if either is; an allowlist and full give the allowlist; two
// allowlists give the pairs both list (none: off).
//
// Limits are caps (provider.Limits, zero fields: no cap at this level):
// the narrowest of two is the smaller value per field.
//
// A Policy's unset parts (nil Network, zero Limits fields) narrow
// nothing: a workspace or token without a policy leaves the server's.
// Bad input is fs.ErrInvalid; a policy wider than the one it must stay
// within (Within) is fs.ErrPermission.
package execpolicy
