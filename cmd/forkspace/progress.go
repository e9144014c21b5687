package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/forkspace/forkspace/transfer"
)

// meter follows a transfer: it keeps the final counts for the summary and
// draws a progress bar on stderr when stderr is a terminal.
type meter struct {
	desc string
	w    io.Writer
	bar  *progressbar.ProgressBar
	tty  bool
	last transfer.Progress
}

func (a *app) meter(desc string) *meter {
	f, ok := a.stderr.(*os.File)
	return &meter{desc: desc, w: a.stderr, tty: ok && term.IsTerminal(int(f.Fd()))}
}

func (m *meter) update(p transfer.Progress) {
	m.last = p
	if !m.tty {
		return
	}
	if m.bar == nil {
		m.bar = progressbar.NewOptions64(p.TotalBytes,
			progressbar.OptionSetWriter(m.w),
			progressbar.OptionSetDescription(m.desc),
			progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = m.bar.Set64(p.Bytes)
}

// done removes the bar.
func (m *meter) done() {
	if m.bar != nil {
		_ = m.bar.Finish()
	}
}
