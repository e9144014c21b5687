package sqltx

import "fmt"

const (
	qSetting    = `SELECT value FROM settings WHERE key = $1`
	qSetSetting = `INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`
)

// Setting implements meta.Tx.
func (t *Tx) Setting(key string) (string, error) {
	var v string
	err := t.queryRow(fmt.Sprintf("get setting %q", key), false, qSetting, []any{key}, &v)
	return v, err
}

// SetSetting implements meta.Tx. The value goes as bytes: a setting may
// hold any bytes (NUL included), which PostgreSQL keeps only in a BYTEA
// column; SQLite keeps them in its TEXT column as they are.
func (t *Tx) SetSetting(key, value string) error {
	_, err := t.exec(fmt.Sprintf("set setting %q", key), qSetSetting, key, []byte(value))
	return err
}
