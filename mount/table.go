package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
)

// ErrUnavailable reports a mount source that could not be reached (a
// refused connection, an HTTP 5xx): the index fails and nothing lands.
var ErrUnavailable = errors.New("mount source unavailable")

// DefaultWriteBackMs is the debounce window when Options.WriteBackMs is 0.
const DefaultWriteBackMs = 500

// WithDefaults returns o with zero fields replaced by their defaults, or an
// error wrapping fs.ErrInvalid for an unknown mode or write-back, or a
// negative window or cap.
func (o Options) WithDefaults() (Options, error) {
	if o.Mode == "" {
		o.Mode = ReadOnly
	}
	if o.WriteBack == "" {
		o.WriteBack = Debounce
	}
	if o.WriteBackMs == 0 {
		o.WriteBackMs = DefaultWriteBackMs
	}
	switch {
	case o.Mode != ReadOnly && o.Mode != ReadWrite:
		return o, fmt.Errorf("mount options: %w: mode %q (want %q or %q)", fs.ErrInvalid, o.Mode, ReadOnly, ReadWrite)
	case o.WriteBack != Debounce && o.WriteBack != Manual:
		return o, fmt.Errorf("mount options: %w: write-back %q (want %q or %q)", fs.ErrInvalid, o.WriteBack, Debounce, Manual)
	case o.WriteBackMs < 0 || o.MaxBytes < 0 || o.MaxEntries < 0:
		return o, fmt.Errorf("mount options: %w: negative window or cap", fs.ErrInvalid)
	}
	return o, nil
}

// Strategy names how a mount brings content in.
type Strategy string

const (
	StrategyLazy    Strategy = "lazy"
	StrategyEager   Strategy = "eager"
	StrategyVirtual Strategy = "virtual"
)

// StrategyOf returns m's strategy, or an error wrapping fs.ErrInvalid
// unless m implements exactly one of Lazy, Eager and Virtual.
func StrategyOf(m Mount) (Strategy, error) {
	var found []Strategy
	if _, ok := m.(Lazy); ok {
		found = append(found, StrategyLazy)
	}
	if _, ok := m.(Eager); ok {
		found = append(found, StrategyEager)
	}
	if _, ok := m.(Virtual); ok {
		found = append(found, StrategyVirtual)
	}
	if len(found) != 1 {
		return "", fmt.Errorf("mount %s: %w: implements %d of lazy, eager and virtual (want exactly one)", m.Kind(), fs.ErrInvalid, len(found))
	}
	return found[0], nil
}

// checkWritable fails when a read-write mount cannot accept writes.
func checkWritable(m Mount, mode Mode) error {
	if mode != ReadWrite {
		return nil
	}
	_, w := m.(Writable)
	_, vw := m.(VirtualWriter)
	if !w && !vw {
		return fmt.Errorf("mount %s: %w: read-write mode on a source that cannot be written", m.Kind(), errors.ErrUnsupported)
	}
	return nil
}

// Table is a validated mount table: absolute, clean, non-nested roots, each
// with a mount or a factory and options with defaults applied. It is
// immutable and safe for concurrent use.
type Table struct {
	specs []Spec // sorted by root
}

// NewTable validates specs: every root absolute and clean ("/data", not
// "/" or "/data/"), exactly one of Mount and Factory, valid options, a bare
// mount of exactly one strategy that can be written when read-write, and no
// root equal to or nested in another (the error names both roots). Errors
// wrap fs.ErrInvalid (errors.ErrUnsupported for read-write on a read-only
// source).
func NewTable(specs []Spec) (*Table, error) {
	t := &Table{specs: slices.Clone(specs)}
	for i := range t.specs {
		s := &t.specs[i]
		if err := checkRoot(s.Root); err != nil {
			return nil, err
		}
		if (s.Mount == nil) == (s.Factory == nil) {
			return nil, fmt.Errorf("mount %s: %w: exactly one of Mount and Factory", s.Root, fs.ErrInvalid)
		}
		o, err := s.Options.WithDefaults()
		if err != nil {
			return nil, fmt.Errorf("mount %s: %w", s.Root, err)
		}
		s.Options = o
		if s.Mount != nil {
			if _, err := StrategyOf(s.Mount); err != nil {
				return nil, fmt.Errorf("mount %s: %w", s.Root, err)
			}
			if err := checkWritable(s.Mount, o.Mode); err != nil {
				return nil, fmt.Errorf("mount %s: %w", s.Root, err)
			}
		}
	}
	slices.SortFunc(t.specs, func(a, b Spec) int { return strings.Compare(a.Root, b.Root) })
	for i, a := range t.specs {
		for _, b := range t.specs[i+1:] {
			if a.Root == b.Root || strings.HasPrefix(b.Root, a.Root+"/") {
				return nil, fmt.Errorf("mount %s: %w: nested in mount %s", b.Root, fs.ErrInvalid, a.Root)
			}
		}
	}
	return t, nil
}

func checkRoot(root string) error {
	if !strings.HasPrefix(root, "/") || root == "/" || path.Clean(root) != root || !fs.ValidPath(root[1:]) {
		return fmt.Errorf("mount %q: %w: root must be an absolute clean path below /", root, fs.ErrInvalid)
	}
	return nil
}

// Specs returns the table's rows sorted by root (a copy).
func (t *Table) Specs() []Spec { return slices.Clone(t.specs) }

// Spec returns the row of root, or false.
func (t *Table) Spec(root string) (Spec, bool) {
	for _, s := range t.specs {
		if s.Root == root {
			return s, true
		}
	}
	return Spec{}, false
}

// Match returns the row whose root is the longest prefix of name and name
// relative to it ("." for the root itself). name is a workspace path, "a/b"
// (io/fs style) or "/a/b". Roots do not nest, so at most one row matches.
func (t *Table) Match(name string) (Spec, string, bool) {
	p := "/" + strings.TrimPrefix(name, "/")
	if p == "/." {
		return Spec{}, "", false
	}
	for _, s := range t.specs {
		switch {
		case p == s.Root:
			return s, ".", true
		case strings.HasPrefix(p, s.Root+"/"):
			return s, p[len(s.Root)+1:], true
		}
	}
	return Spec{}, "", false
}

// ReadOnly reports whether name lies under a read-only mount (its root
// included): a change there must not be recorded or written upstream.
func (t *Table) ReadOnly(name string) bool {
	s, _, ok := t.Match(name)
	return ok && s.Options.Mode == ReadOnly
}

// Writable reports whether name lies under a read-write mount, so a change
// there is written back to the source.
func (t *Table) Writable(name string) bool {
	s, _, ok := t.Match(name)
	return ok && s.Options.Mode == ReadWrite
}

// Ignored reports whether name lies under a mount and one of its path
// segments below the root is in that mount's Ignore list.
func (t *Table) Ignored(name string) bool {
	s, rel, ok := t.Match(name)
	if !ok || rel == "." || len(s.Options.Ignore) == 0 {
		return false
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if slices.Contains(s.Options.Ignore, seg) {
			return true
		}
	}
	return false
}

// CheckWrite returns a *fs.PathError wrapping errdefs.ErrReadOnly when name
// lies under a read-only mount, and nil otherwise.
func (t *Table) CheckWrite(op, name string) error {
	if t.ReadOnly(name) {
		return &fs.PathError{Op: op, Path: name, Err: errdefs.ErrReadOnly}
	}
	return nil
}

// Policy is what a command runner consults about workspace paths (the
// sandbox's pull-back): *Table implements it.
type Policy interface {
	ReadOnly(name string) bool
	Writable(name string) bool
	Ignored(name string) bool
}

var _ Policy = (*Table)(nil)

// Build returns s's mount: the bare mount, or the factory's result for mc,
// checked like a bare mount.
func Build(ctx context.Context, s Spec, mc Context) (Mount, error) {
	if s.Mount != nil {
		return s.Mount, nil
	}
	m, err := s.Factory(ctx, mc)
	if err != nil {
		return nil, fmt.Errorf("build mount %s: %w", s.Root, err)
	}
	if m == nil {
		return nil, fmt.Errorf("build mount %s: %w: factory returned nil", s.Root, fs.ErrInvalid)
	}
	if _, err := StrategyOf(m); err != nil {
		return nil, fmt.Errorf("build mount %s: %w", s.Root, err)
	}
	if err := checkWritable(m, s.Options.Mode); err != nil {
		return nil, fmt.Errorf("build mount %s: %w", s.Root, err)
	}
	return m, nil
}
