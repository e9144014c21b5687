package sqlitemeta

import "fmt"

const (
	qSetting    = `SELECT value FROM settings WHERE key = $1`
	qSetSetting = `INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`
)

// Setting implements meta.Tx.
func (t *tx) Setting(key string) (string, error) {
	var v string
	err := t.queryRow(fmt.Sprintf("get setting %q", key), false, qSetting, []any{key}, &v)
	return v, err
}

// SetSetting implements meta.Tx.
func (t *tx) SetSetting(key, value string) error {
	_, err := t.exec(fmt.Sprintf("set setting %q", key), qSetSetting, key, value)
	return err
}
