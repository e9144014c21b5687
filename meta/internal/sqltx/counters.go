package sqltx

import (
	"fmt"
	"io/fs"
)

// qAllocate creates the counter at 1 or advances it by n, returning the
// first value of the reserved range. The CAST makes PostgreSQL type $2 as
// a BIGINT rather than the INTEGER of the literal beside it.
const qAllocate = `INSERT INTO counters (name, next) VALUES ($1, 1 + CAST($2 AS BIGINT))
	ON CONFLICT (name) DO UPDATE SET next = counters.next + $2
	RETURNING next - $2`

// Allocate implements meta.Tx. n must be positive (fs.ErrInvalid otherwise).
func (t *Tx) Allocate(name string, n int64) (int64, error) {
	op := fmt.Sprintf("allocate %d from counter %q", n, name)
	if n <= 0 {
		return 0, fmt.Errorf("%s: %w: count must be positive", op, fs.ErrInvalid)
	}
	var first int64
	err := t.queryRow(op, true, qAllocate, []any{name, n}, &first)
	return first, err
}
