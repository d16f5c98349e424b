package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler is a slog.Handler that masks secrets (Redactor.String) in every
// message and attribute before the next handler sees them: the last line of
// defence for a log line whose author passed an upstream text on. Errors,
// Stringers and other values are logged as their masked text.
type Handler struct {
	next slog.Handler
	r    *Redactor
}

// NewHandler returns a Handler that masks with r (shapes only when r is
// nil) and writes to next.
func NewHandler(next slog.Handler, r *Redactor) *Handler { return &Handler{next: next, r: r} }

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = h.attr(a)
	}
	return &Handler{next: h.next.WithAttrs(masked), r: h.r}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), r: h.r}
}

func (h *Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		masked := make([]slog.Attr, len(g))
		for i, ga := range g {
			masked[i] = h.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(masked...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.r.String(x.String()))
		case []byte:
			return slog.String(a.Key, h.r.String(string(x)))
		default:
			return slog.String(a.Key, h.r.String(fmt.Sprintf("%+v", x)))
		}
	default: // numbers, bools, times, durations: no text to leak
		return slog.Attr{Key: a.Key, Value: v}
	}
}
