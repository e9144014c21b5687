// Package feed is the store's change feed: the entries of the audit log
// (package audit), each with its store-wide sequence number, delivered
// to subscribers in order as they are recorded, and from any earlier
// sequence number the log still holds (docs/decisions/017-change-feed.md).
//
// A Feed hears of every entry its audit.Log records and keeps the newest
// in a ring in memory. A subscriber is a Cursor: the sequence number of
// the last event it went past. It pulls events from the ring, or from the
// database a page at a time when it is further behind, so a slow
// subscriber delays nobody: there are no per-subscriber queues to fill.
// A waiting cursor is woken by the events it may keep: a workspace's
// cursor by that workspace's, a store-wide one by every event.
//
//	c, err := f.Subscribe(ctx, lastSeen, feed.Filter{WorkspaceID: id})
//	for {
//		events, err := c.Next(ctx) // waits for at least one
//		...
//	}
//
// Invariants: a cursor delivers every kept event with a sequence number
// above its start exactly once, in increasing order, or fails with
// ErrTooOld when the log was pruned past its position (or the start is
// past the newest entry). Events are shared between subscribers: do not
// modify them. Concurrency: a Feed is safe for concurrent use; a Cursor
// belongs to one goroutine.
package feed
