// Package mcpserver exposes the model-facing tools (package tools) as a
// Model Context Protocol server, built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// Each MCP session works in one workspace, obtained through a
// provider.Manager: lazily on the first tool call, persisted by ref, closed
// when the MCP session ends. Over stdio (Serve with a transport) the
// workspace is fixed by the caller; over streamable HTTP (Handler) the
// client picks it with the query parameter ?workspace=NAME on the endpoint
// URL (or the X-Forkspace-Workspace header), and a session that names none
// gets a workspace of its own, created on demand and deleted when the
// session ends (Options.Discard) unless it asked to keep it (?keep=true):
// no new stored workspace per session. An invalid ?workspace= is refused
// at connect (HTTP 400), not at the first tool call.
//
// Behind httpapi.Authenticate, the token is checked at connect (the
// workspace must be one it reaches: 404 otherwise, as for a missing one;
// a token whose pattern is one name works there without naming it) and
// on every tool call, with the token of that call's request: read-only
// tools need read, the exec tools exec, the others write, and fork's new
// name and merge's and cherry_pick's source must be inside the token's
// pattern. Calls run in the token's tenant.
//
// A tool with an output schema (diff) returns structured content next to
// its text. Tool failures are tool results with isError set (the model sees them
// and can act), never protocol errors. Every call is attributed to the
// actor "mcp:<client name>" and the session, for the audit log. A call
// whose request carries a progress token (_meta.progressToken) gets
// notifications/progress while exec or exec_wait runs.
package mcpserver
