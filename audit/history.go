package audit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/forkspace/forkspace/meta"
)

// MaxCommand bounds the command text an entry keeps (Entry.Command).
const MaxCommand = 4096

// Command returns the text of a shell command as an entry keeps it: at
// most MaxCommand bytes of it, cut at a UTF-8 boundary and marked with
// how many bytes were left out.
func Command(text string) string {
	if len(text) <= MaxCommand {
		return text
	}
	n := MaxCommand
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + fmt.Sprintf("…[cut %d bytes]", len(text)-n)
}

// Retention bounds how long the states audited calls produced stay
// recorded: a state stays while it is among its workspace's newest Steps
// and younger than Age.
type Retention struct {
	Steps int           `json:"steps"`
	Age   time.Duration `json:"age_ns"`
}

// DefaultRetention applies when the store has no setting.
var DefaultRetention = Retention{Steps: 10_000, Age: 7 * 24 * time.Hour}

// Settings keys of the retention policy.
const (
	settingSteps = "history_steps"
	settingAge   = "history_age"
)

// Validate checks r: both bounds must be positive (fs.ErrInvalid).
func (r Retention) Validate() error {
	if r.Steps <= 0 || r.Age <= 0 {
		return fmt.Errorf("history retention %d steps, %s: %w: both must be positive", r.Steps, r.Age, fs.ErrInvalid)
	}
	return nil
}

// retention reads the policy in tx (DefaultRetention where unset).
func retention(tx meta.Tx) (Retention, error) {
	r := DefaultRetention
	if v, err := tx.Setting(settingSteps); err == nil {
		if r.Steps, err = strconv.Atoi(v); err != nil {
			return r, fmt.Errorf("setting %s: %w", settingSteps, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	if v, err := tx.Setting(settingAge); err == nil {
		if r.Age, err = time.ParseDuration(v); err != nil {
			return r, fmt.Errorf("setting %s: %w", settingAge, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	return r, nil
}

// Retention returns the store's retention policy.
func (l *Log) Retention(ctx context.Context) (Retention, error) {
	var r Retention
	err := l.meta.View(ctx, func(tx meta.Tx) (err error) {
		r, err = retention(tx)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("read history retention: %w", err)
	}
	return r, nil
}

// SetRetention records the store's retention policy; states past it go at
// the next call recorded for their workspace or the next PruneStates.
func (l *Log) SetRetention(ctx context.Context, r Retention) error {
	if err := r.Validate(); err != nil {
		return err
	}
	err := l.meta.Update(ctx, func(tx meta.Tx) error {
		if err := tx.SetSetting(settingSteps, strconv.Itoa(r.Steps)); err != nil {
			return err
		}
		return tx.SetSetting(settingAge, r.Age.String())
	})
	if err != nil {
		return fmt.Errorf("set history retention: %w", err)
	}
	return nil
}

// PruneStates drops the states of every workspace past the retention policy and
// returns how many it dropped (garbage collection runs it first).
func (l *Log) PruneStates(ctx context.Context) (int, error) {
	var n int
	err := l.meta.Update(ctx, func(tx meta.Tx) error {
		r, now, err := Policy(tx)
		if err != nil {
			return err
		}
		n, err = tx.PruneStates("", r.Steps, now.Add(-r.Age))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune history: %w", err)
	}
	return n, nil
}

// Policy reads the retention policy and the database clock in tx.
func Policy(tx meta.Tx) (Retention, time.Time, error) {
	r, err := retention(tx)
	if err != nil {
		return r, time.Time{}, err
	}
	now, err := tx.Now()
	return r, now, err
}

// recordState records the state workspace e.WorkspaceID is in as e's and
// prunes that workspace's states past the policy. A workspace that no
// longer exists records nothing.
func recordState(tx meta.Tx, e *Entry) error {
	if e.WorkspaceID == "" {
		return nil
	}
	err := tx.RecordState(e.Seq, e.WorkspaceID, e.Time)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	e.State = true
	r, now, err := Policy(tx)
	if err != nil {
		return err
	}
	_, err = tx.PruneStates(e.WorkspaceID, r.Steps, now.Add(-r.Age))
	return err
}
