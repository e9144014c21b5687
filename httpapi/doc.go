// Package httpapi is forkspace's HTTP surface: the REST API under /v1
// (workspaces, checkpoints, diffs, files, exec, mounts, the audit log and
// its change feed as Server-Sent Events, gc and fsck), its OpenAPI
// document, and Client, a Go client of that API (Client.Events follows a
// stream and reconnects with Last-Event-ID).
//
// # One interface, three sides
//
// API is the whole API as Go calls. Local implements it over an open
// *forkspace.Store (validation, audit records, paging), Client over HTTP,
// and Server adapts HTTP requests to any API. The command line is written
// once against API, so it works the same on a store it opens and through
// a running server. The route table (routes.go) registers the handlers
// and generates the OpenAPI 3.1 document, so the two cannot drift.
//
// # Files
//
// Downloads carry a strong ETag (inode, size, modification and change
// times), honour one Range, If-Range and If-None-Match, and never mix two
// versions of a file (a file replaced mid-download cuts the response).
// Uploads stream to the store and commit at the end in one transaction
// (vfs.WriteFileFromIf): a cut-off upload, a quota refusal or a failed
// If-Match / If-None-Match: * (checked at commit, under the workspace's
// write lock) changes nothing.
//
// # Slow clients
//
// HTTPServer bounds headers; Server bounds each read of a request body
// and each write of a response by Options.BodyIdle rather than whole
// transfers, so a stalled client holds only its own connection.
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
// # Tokens
//
// Authenticate puts everything a server serves behind the store's tokens
// (package auth) once it holds one: a bearer token from the Authorization
// header only (a token in a query string is 400), its scope and tenant in
// the request's context. Each route of the table declares what it needs
// (route.need: read, write or exec on {ws}, store-wide admin, any
// token); Server checks it before the handler, Local checks the other
// workspaces a request names (a fork's new name, diff's states, merge's
// source) and filters listings. A workspace a token does not reach is
// the same 404 whether it exists or not.
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
