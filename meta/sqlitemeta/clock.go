package sqlitemeta

import (
	"bytes"
	"context"
	"database/sql/driver"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/meta/internal/sqltx"
	"modernc.org/sqlite"
)

// nowFunc is the SQL name of the database clock (sqltx.NowFunc): here Unix
// nanoseconds, strictly increasing within the process.
const nowFunc = sqltx.NowFunc

// drv is this package's private SQLite driver: it carries the clock
// function, sqltx.HasBytesFunc (and scrub.go's) without registering anything on the process-wide "sqlite" driver.
var drv = newDriver()

// lastNow is the last value the clock returned.
var lastNow atomic.Int64

// nowNS reads the wall clock in Unix nanoseconds, never returning a value at
// or below one it returned before. SQLite's own 'now' has millisecond
// resolution, too coarse to order rows written in quick succession.
func nowNS() int64 {
	for {
		last := lastNow.Load()
		now := time.Now().UnixNano()
		if now <= last {
			now = last + 1
		}
		if lastNow.CompareAndSwap(last, now) {
			return now
		}
	}
}

func newDriver() *sqlite.Driver {
	d := &sqlite.Driver{}
	d.MustRegisterScalarFunction(nowFunc, 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		return nowNS(), nil
	})
	d.MustRegisterDeterministicScalarFunction(sqltx.HasBytesFunc, 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		haystack, _ := args[0].([]byte)
		needle, _ := args[1].([]byte)
		return bytes.Contains(haystack, needle), nil
	})
	registerScrub(d)
	return d
}

// connector opens connections of drv to one DSN.
type connector struct{ dsn string }

var _ driver.Connector = connector{}

// Connect implements driver.Connector.
func (c connector) Connect(context.Context) (driver.Conn, error) { return drv.Open(c.dsn) }

// Driver implements driver.Connector.
func (c connector) Driver() driver.Driver { return drv }
