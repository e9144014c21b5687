// Package localprovider is the provider of kind "local": workspaces of an
// embedded forkspace store (an SQLite database and a blob directory).
//
// A Config names a workspace (opened if it exists, created otherwise,
// optionally as a fork of another state) or, with no name, asks for a
// workspace per session (SessionWorkspace: "session-" plus the session ID,
// or "session_" plus a digest of an ID that is no valid name; one
// workspace per ID, an empty ID refused; created on first open and reused
// after). The Ref payload is the workspace ID, so a ref
// resolves after a restart and survives renames; it holds no secrets.
//
// The built workspace has the fs and snapshot modules, and the shell module
// when Options.Shell is set and the agent declared it (or declared
// nothing). The provider keeps no per-session state: the store is shared
// infrastructure, and everything a session uses lives in its Workspace.
package localprovider
