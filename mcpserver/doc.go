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
// gets a workspace of its own, created on demand.
//
// A tool with an output schema (diff) returns structured content next to
// its text. Tool failures are tool results with isError set (the model sees them
// and can act), never protocol errors. Every call is attributed to the
// actor "mcp:<client name>" and the session, for the audit log. A call
// whose request carries a progress token (_meta.progressToken) gets
// notifications/progress while exec or exec_wait runs.
package mcpserver
