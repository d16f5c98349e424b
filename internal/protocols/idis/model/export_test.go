package model

import "context"

// WithCacheKey returns a context whose turns use the response cache under
// prefix, which should name the debate, the node and its attempt
// ("<debate_id>/<node>/<attempt>"): a re-run of the same attempt reuses the
// responses, a new attempt asks the model again. Without a prefix a turn
// of a debate uses its place in the debate.
func WithCacheKey(ctx context.Context, prefix string) context.Context {
	return context.WithValue(ctx, cacheKey{}, prefix)
}
