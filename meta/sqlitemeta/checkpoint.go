package sqlitemeta

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// checkpointGap is the least time between two background checkpoints: under
// a steady stream of commits the WAL grows by at most this much writing
// (plus one checkpoint's duration) between copies.
const checkpointGap = 20 * time.Millisecond

// walBackstopPages is the WAL size, in pages, at which the writer
// checkpoints by itself (PRAGMA wal_autocheckpoint). Under a steady stream
// of commits that is how the WAL gets restarted from its beginning: a
// restart needs a checkpoint that caught up with the last commit, which
// only the writer can guarantee. The background checkpointer has by then
// copied most frames, so the writer's checkpoint is mostly its fsyncs, paid
// once per 32 MiB of WAL instead of once per 8 MiB (SQLite's default).
const walBackstopPages = 4096

// checkpointer copies the WAL back into the database file on a connection
// of its own. SQLite's automatic checkpoint runs inside a COMMIT and fsyncs
// the WAL and the database there, making a whole batch of Updates wait for
// the disk; here only this goroutine waits (single Updates ~25% faster,
// 256-node puts ~2× on this machine). It runs when commits happened, at
// most once per checkpointGap; when writes pause it catches up, and the
// next commit restarts the WAL. Checkpoints never affect durability: a
// committed transaction is in the WAL either way.
type checkpointer struct {
	conn *sql.Conn
	log  *slog.Logger
	kick chan struct{} // buffered 1: commits happened since the last run
	stop chan struct{}
	done chan struct{}
}

func newCheckpointer(conn *sql.Conn, log *slog.Logger) *checkpointer {
	return &checkpointer{
		conn: conn,
		log:  log,
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
}

// committed tells the checkpointer that the WAL grew. It never blocks.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	gap := time.NewTimer(0)
	defer gap.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		select {
		case <-c.stop:
			return
		case <-gap.C:
		}
		c.checkpoint()
		gap.Reset(checkpointGap)
	}
}

// checkpoint runs one PASSIVE checkpoint: it copies what no reader still
// needs and never blocks the writer or readers. A failure is logged; the
// next commit retries, and the writer's backstop bounds the WAL meanwhile.
func (c *checkpointer) checkpoint() {
	var busy, frames, copied int
	err := c.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	if err != nil {
		c.log.Warn("checkpoint WAL", "err", err)
	}
}

// close stops the goroutine and closes the connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.conn.Close()
}
