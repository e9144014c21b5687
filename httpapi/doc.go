// Package httpapi is forkspace's HTTP surface: the REST API under /v1
// (workspaces, checkpoints, diffs, files, exec, mounts, the audit log, gc
// and fsck), its OpenAPI document, and Client, a Go client of that API.
//
// # Safety of every route
//
// Guard wraps everything a server serves (the REST API, MCP, health
// checks): a request reaching a loopback listener must name a loopback
// host, and a request carrying an Origin header must come from the server's
// own origin; others get 403 with the JSON error shape. LoopbackAddr tells
// the command line whether an address would be reachable from other hosts
// (serve refuses those without --insecure until tokens and TLS exist).
//
// # Errors
//
// Every error response is one JSON object, {"code", "message", "path"},
// with the HTTP status and code chosen by one table (errorTable) from the
// io/fs and errdefs sentinels the library returns, checked with errors.Is.
// This is the only place errors are interpreted. A Client turns a code
// back into its sentinel (*Error unwraps to it), so errors.Is behaves the
// same on either side of the API.
package httpapi
