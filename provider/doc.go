// Package provider is the workspace-provider contract: how an agent
// framework obtains a live workspace for a session, persists a handle to it
// and gets it back after a restart.
//
// A Provider builds workspaces (Open) and rebuilds them from a serializable
// Ref (Resolve). Providers are registered explicitly in a Registry, which
// decodes JSON configurations by their "kind" field. A Manager is the
// session side: it opens a declared workspace lazily on first use, caches
// the live workspace, persists its Ref in a RefStore, resolves it again
// after a restart, retries transient failures, re-resolves evicted
// workspaces, and closes everything at session end.
//
// Invariants:
//   - A provider keeps no per-session state on itself; everything a
//     session needs lives in the Workspace it returns.
//   - A Ref carries no secrets and no live objects, and its Capabilities say
//     exactly which modules were built. The Manager checks, at open and at
//     resolve, that the declared capabilities are covered by the Ref and
//     that each declared module is present on the Workspace (*FailedError
//     otherwise).
//   - Ref.SchemaVersion is checked with CheckSchemaVersion: absent (legacy),
//     the previous (when ≥ 1) and the current version are accepted,
//     anything else is refused with a message naming that set. A Ref's JSON
//     decoding refuses unknown keys and reads the seed's "schemaVersion" as
//     "schema_version".
//
// Errors: *FailedError from Open and Resolve (Transient ones are retried),
// *EvictedError from module methods (the Manager re-resolves and retries
// once), anything else is an ordinary error for the caller (a tool error
// for a model).
//
// Built-in providers live in sub-packages: localprovider (the embedded
// store), memprovider (an in-memory store) and hostdirprovider (a host
// directory, for development).
//
//	var reg provider.Registry
//	reg.Register(localprovider.New(st, localprovider.Options{}))
//	cfg, err := reg.DecodeConfig([]byte(`{"kind":"local","workspace":"agent-1"}`))
//	m := provider.NewManager(provider.ManagerOptions{Registry: &reg, Refs: provider.MetaRefs(db)})
//	err = m.Use(ctx, session, provider.Declaration{Name: "box", Config: cfg}, func(ws provider.Workspace) error {
//		return ws.FS().WriteFile(ctx, "notes.md", []byte("hi"), 0o644)
//	})
package provider
