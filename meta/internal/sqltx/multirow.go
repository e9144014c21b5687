package sqltx

import (
	"fmt"
	"math/bits"
	"strings"
)

// maxRowsLog2 bounds a multi-row INSERT to 1<<maxRowsLog2 rows.
const maxRowsLog2 = 6

// multiRow holds one INSERT written for 1, 2, 4, … 64 rows, so that putting
// n rows costs one statement per set bit of n (per 64 rows beyond) instead
// of one per row, from a handful of prepared statements.
type multiRow struct {
	arity int // parameters per row
	sql   [maxRowsLog2 + 1]string
}

// newMultiRow builds the statements: head is the INSERT up to VALUES, row
// one row's tuple with '?' for each parameter, tail what follows the rows.
// Parameters are numbered $1, $2, … across rows.
func newMultiRow(head, row, tail string) *multiRow {
	m := &multiRow{arity: strings.Count(row, "?")}
	for lg := range m.sql {
		var b strings.Builder
		b.WriteString(head)
		p := 0
		for r := range 1 << lg {
			if r > 0 {
				b.WriteString(", ")
			}
			for _, c := range row {
				if c == '?' {
					p++
					fmt.Fprintf(&b, "$%d", p)
				} else {
					b.WriteRune(c)
				}
			}
		}
		b.WriteString(tail)
		m.sql[lg] = b.String()
	}
	return m
}

// insert runs m for n rows; args fills row i's parameters.
func (t *Tx) insert(op string, m *multiRow, n int, args func(i int, dst []any)) error {
	buf := make([]any, min(n, 1<<maxRowsLog2)*m.arity)
	for i := 0; i < n; {
		lg := min(maxRowsLog2, bits.Len(uint(n-i))-1)
		k := 1 << lg
		for r := range k {
			args(i+r, buf[r*m.arity:(r+1)*m.arity])
		}
		if _, err := t.exec(op, m.sql[lg], buf[:k*m.arity]...); err != nil {
			return err
		}
		i += k
	}
	return nil
}
