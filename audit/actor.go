package audit

import "context"

// Actor is who makes calls: a user or agent name and its session.
type Actor struct {
	Name    string `json:"name,omitempty"`
	Session string `json:"session,omitempty"`
}

type actorKey struct{}

// WithActor returns a context whose calls Run records as made by a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor WithActor stored in ctx (zero if none).
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	return a
}
