// Package providertest is the conformance suite of provider.Provider
// implementations: run it from each provider's tests with Run.
//
// It checks the clauses of the contract a provider can get wrong on its
// own: a ref round-trips through JSON and resolves to the same files; the
// ref's capabilities say exactly which modules the workspace has, with or
// without declared capabilities; two sessions opened from a per-session
// config never see each other's files (no per-session state on the
// provider); foreign refs and refs from a future schema are refused with a
// permanent *provider.FailedError.
package providertest
