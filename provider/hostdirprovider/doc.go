// Package hostdirprovider is the provider of kind "hostdir": a plain host
// directory as a workspace, for development. Every file operation goes
// through an os.Root, so no path (.., absolute symlinks, symlinks out of
// the tree) reaches outside the directory.
//
// The workspace has the fs module only (no snapshots, no shell). With
// PerSession set, each session gets its own subdirectory
// (named by localprovider.SessionWorkspace; an empty session ID is
// refused), created on open. The Ref payload is the directory's
// absolute path; it holds no secrets. The provider keeps no per-session
// state: the os.Root lives in the Workspace and Close closes it.
package hostdirprovider
