// Package memprovider is the provider of kind "memory": workspaces of an
// ephemeral, in-memory forkspace store (meta/memmeta and blob/memblob)
// owned by the provider.
//
// It behaves like localprovider (same Config fields, same modules, same
// Ref payload) except that nothing survives the process: a Ref resolves
// only within the process that opened it, and resolving it elsewhere is a
// permanent *provider.FailedError. Use it for tests and throwaway agents.
package memprovider
