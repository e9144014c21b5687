package audit

import "context"

type coverKey struct{}

// Cover returns a context whose changes to workspace id are recorded by
// the call running under it (Run marks its call's context), so the
// store's recorder of uncovered changes (vfs.FS.Watch) leaves them out.
func Cover(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, coverKey{}, id)
}

// Covered reports whether a call recording changes to workspace id runs
// under ctx (Cover).
func Covered(ctx context.Context, id string) bool {
	c, ok := ctx.Value(coverKey{}).(string)
	return ok && c == id
}

type surfaceKey struct{}

// WithSurface returns a context whose uncovered changes are recorded
// under the door name ("fuse": tools "fuse.<op>").
func WithSurface(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, surfaceKey{}, name)
}

// SurfaceFrom returns the door WithSurface stored in ctx ("" if none).
func SurfaceFrom(ctx context.Context) string {
	s, _ := ctx.Value(surfaceKey{}).(string)
	return s
}
