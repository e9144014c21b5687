/**
 * forkspace for TypeScript: a client of the HTTP API ({@link Client},
 * {@link Workspace}), errors as one class per API code, and a workspace
 * provider implementing the agent-framework provider contract
 * ({@link ForkspaceWorkspaceProvider}).
 */
export * from "./errors.js";
export * from "./client.js";
export type { FeedEvent, EventsOptions } from "./events.js";
