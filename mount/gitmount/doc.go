// Package gitmount is an eager, read-only mount of a git repository: at
// index time it resolves a ref (a branch, a tag or a commit), reads that
// commit's tree (or one subtree of it) and writes every file through the
// mount's WriteAPI with its mode (0o755 for executables, 0o644 otherwise),
// every directory, and every symlink with its target.
//
// Remote repositories (http, https) are fetched with go-git into memory,
// never onto disk: depth 1 when the ref is a branch, a tag or empty (the
// remote's HEAD); the whole history when it is a commit hash, which a
// server need not serve by itself. Local repositories (a path or a file://
// URL, bare or not) are opened in place, without a clone and without
// running the git binary.
//
// Invariants:
//   - A token is sent as HTTP basic auth (user Options.Username, password
//     the token) and lives only in memory: it is never written to the
//     repository storage, the mount URL, entries or errors. A mount URL
//     carrying a password is rejected.
//   - Without Options.Token, GIT_TOKEN is used for any host and
//     GITHUB_TOKEN only for github.com, so a token meant for GitHub is never
//     sent elsewhere.
//   - Submodules are not materialized (they are other repositories).
//   - Materialize writes nothing before the ref and the subtree resolved: a
//     bad ref, a missing repository or a refused token fails the index
//     before any write.
//
// Errors: a missing repository, ref or subtree is fs.ErrNotExist (a ref or
// subtree also ErrRefNotFound); a missing or refused token is
// fs.ErrPermission; a server that cannot be reached is ErrUnreachable; a
// bad URL is fs.ErrInvalid.
//
// A Mount is safe for concurrent use; each Materialize fetches again.
//
// Use from code:
//
//	m, err := gitmount.Open(gitmount.Options{URL: "https://github.com/o/r.git", Ref: "main", Subdir: "docs"})
//
// or from a mount URL (the CLI's form):
//
//	git+https://host/repo.git#REF:SUBDIR
//	git+file:///path/to/bare.git#v1.0
//	github://owner/repo#REF:SUBDIR
package gitmount
