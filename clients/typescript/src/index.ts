/**
 * forkspace for TypeScript: a client of the HTTP API ({@link Client},
 * {@link Workspace}), errors as one class per API code, and a workspace
 * provider implementing the agent-framework provider contract of seed 002
 * ({@link ForkspaceWorkspaceProvider}; its types are exported as in the
 * seed, the live workspace as ProviderWorkspace).
 */
export * from "./errors.js";
export * from "./client.js";
export type { FeedEvent, EventsOptions } from "./events.js";
export type {
  FileEntry,
  FileStat,
  FileSystem,
  GrepOptions,
  GrepResult,
  Logger,
  OpenedWorkspace,
  SessionRef,
  Shell,
  ShellResult,
  Snapshot,
  SnapshotInfo,
  Workspace as ProviderWorkspace,
  WorkspaceCapabilityFlags,
  WorkspaceProvider,
  WorkspaceRef,
} from "./contract.js";
export { WorkspaceEvictedError, WorkspaceFailedError, assertCapabilities, assertRefSchemaVersionSupported, retryTransient } from "./contract.js";
export {
  ForkspaceWorkspaceProvider,
  REF_SCHEMA_VERSION,
  decodeRef,
  parseGrep,
  sessionWorkspace,
  toGoJSON,
  type ForkspaceProviderConfig,
  type ForkspaceProviderOptions,
} from "./provider.js";
