package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// respMeta carries what go-openai does not return: the HTTP status and the
// Retry-After header of the last response.
type respMeta struct {
	status     int
	retryAfter string
}

type metaKey struct{}

// metaDoer is the go-openai HTTP client: it records the status and the
// Retry-After header in the request context's respMeta. go-openai calls it
// synchronously, so the respMeta needs no lock.
type metaDoer struct{ c *http.Client }

func (d metaDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if err == nil {
		if m, ok := req.Context().Value(metaKey{}).(*respMeta); ok {
			m.status = resp.StatusCode
			m.retryAfter = resp.Header.Get("Retry-After")
		}
	}
	return resp, err
}

// chat makes one model call of the conversation: from the response cache
// when it holds the response, else within the debate's budget, with a
// timeout per attempt and retries. It returns an error wrapping
// ErrBudgetExceeded (no request sent), ErrModel (the model cannot be
// reached or answers no choice) or the context's cause when ctx ends. A
// response always has at least one choice.
func (cv *conversation) chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	b, c := cv.b, cv.c
	idx := cv.calls
	cv.calls++
	key := ""
	if b.cfg.Cache != nil && c.CacheKey != "" {
		key = c.CacheKey + "/" + c.Role + "/" + strconv.Itoa(idx)
		raw, ok, err := b.cfg.Cache.ModelResponseGet(ctx, key)
		switch {
		case err != nil:
			b.cfg.Logger.WarnContext(ctx, "llm response cache get failed", slog.String("debate_id", c.DebateID),
				slog.String("role", c.Role), slog.String("key", key), slog.Any("error", err))
		case ok:
			var resp openai.ChatCompletionResponse
			if err := json.Unmarshal(raw, &resp); err == nil && len(resp.Choices) > 0 {
				cv.cached++
				return resp, nil
			}
			b.cfg.Logger.WarnContext(ctx, "llm response cache entry unreadable", slog.String("debate_id", c.DebateID),
				slog.String("role", c.Role), slog.String("key", key))
		}
	}

	est := estimate(req, b.cfg.MaxTokens)
	if err := b.reserve(ctx, c.DebateID, est); err != nil {
		return openai.ChatCompletionResponse{}, err
	}
	// A span per model call, with the GenAI semantic-convention attributes.
	sctx, span := otel.Tracer("github.com/debated/debated/internal/roles/llm").Start(ctx, "chat "+req.Model,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.system", "openai"),
			attribute.String("gen_ai.request.model", req.Model), attribute.String("agent.role", c.Role),
			attribute.String("debate_id", c.DebateID), attribute.Int("gen_ai.request.max_tokens", b.cfg.MaxTokens)))
	resp, err := b.send(sctx, c, req)
	// A server's usage is what the budget counts: a negative count (a
	// broken or hostile server) counts as none, never as tokens given back.
	resp.Usage.PromptTokens, resp.Usage.CompletionTokens = max(0, resp.Usage.PromptTokens), max(0, resp.Usage.CompletionTokens)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "model call failed")
	} else {
		span.SetAttributes(attribute.String("gen_ai.response.model", resp.Model),
			attribute.Int("gen_ai.usage.input_tokens", resp.Usage.PromptTokens),
			attribute.Int("gen_ai.usage.output_tokens", resp.Usage.CompletionTokens))
	}
	span.End()
	if err != nil {
		b.settle(c.DebateID, est, 0)
		return resp, err
	}
	b.settle(c.DebateID, est, resp.Usage.PromptTokens+resp.Usage.CompletionTokens)
	cv.promptTokens += resp.Usage.PromptTokens
	cv.completionTokens += resp.Usage.CompletionTokens
	if b.cfg.OnUsage != nil {
		b.cfg.OnUsage(Usage{TenantID: c.TenantID, DebateID: c.DebateID, Role: c.Role,
			PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens})
	}
	if key != "" {
		if raw, err := json.Marshal(resp); err == nil {
			if err := b.cfg.Cache.ModelResponsePut(context.WithoutCancel(ctx), key, raw); err != nil {
				b.cfg.Logger.WarnContext(ctx, "llm response cache put failed", slog.String("debate_id", c.DebateID),
					slog.String("role", c.Role), slog.String("key", key), slog.Any("error", err))
			}
		}
	}
	return resp, nil
}

// estimate is the budget's guess at a call's tokens: prompt characters / 4
// plus the completion bound.
func estimate(req openai.ChatCompletionRequest, maxTokens int) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	if f := req.ResponseFormat; f != nil && f.JSONSchema != nil {
		if raw, ok := f.JSONSchema.Schema.(json.RawMessage); ok {
			n += len(raw)
		}
	}
	for _, t := range req.Tools {
		if t.Function != nil {
			n += len(t.Function.Name) + len(t.Function.Description)
			if raw, ok := t.Function.Parameters.(json.RawMessage); ok {
				n += len(raw)
			}
		}
	}
	return n/4 + maxTokens
}

// send posts the request, retrying 429, 5xx, timeouts and transport
// errors with backoff.
func (b *Backend) send(ctx context.Context, c *JSONCall, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	attempts := b.cfg.Retry.Attempts
	for attempt := 1; ; attempt++ {
		meta := &respMeta{}
		cctx, cancel := context.WithTimeout(context.WithValue(ctx, metaKey{}, meta), b.cfg.CallTimeout)
		start := b.cfg.Now()
		resp, err := b.client.CreateChatCompletion(cctx, req)
		timedOut := cctx.Err() != nil
		cancel()
		if err == nil && len(resp.Choices) == 0 {
			return resp, fmt.Errorf("%w: response has no choices", ErrModel)
		}
		if err == nil {
			b.redactResponse(&resp)
			b.cfg.Logger.DebugContext(ctx, "llm call", slog.String("debate_id", c.DebateID), slog.String("role", c.Role),
				slog.Int("attempt", attempt), slog.Duration("elapsed", b.cfg.Now().Sub(start)),
				slog.Int("prompt_tokens", resp.Usage.PromptTokens), slog.Int("completion_tokens", resp.Usage.CompletionTokens))
			return resp, nil
		}
		if ctx.Err() != nil { // the caller cancelled: stop at once
			return resp, fmt.Errorf("llm: %s call cancelled: %w", c.Role, context.Cause(ctx))
		}
		status := meta.status
		retryable := timedOut || status == 0 || status == http.StatusTooManyRequests ||
			status == http.StatusRequestTimeout || status >= 500
		// go-openai's error carries the upstream body verbatim (an endpoint
		// may echo the bearer key in it): from here on only the classified,
		// redacted UpstreamError exists, in logs, errors and the ledger.
		uerr := upstreamError(err, status, timedOut, b.cfg.Redactor)
		b.cfg.Logger.WarnContext(ctx, "llm call failed", slog.String("debate_id", c.DebateID), slog.String("role", c.Role),
			slog.Int("attempt", attempt), slog.Int("status", status), slog.String("class", uerr.Class),
			slog.Bool("timeout", timedOut), slog.Bool("retryable", retryable), slog.String("error", uerr.Error()))
		if !retryable || attempt >= attempts {
			return openai.ChatCompletionResponse{}, fmt.Errorf("%w: %s after %d attempt(s): %w", ErrModel, c.Role, attempt, uerr)
		}
		delay := b.backoff(attempt)
		if status == http.StatusTooManyRequests {
			if d, ok := retryAfter(meta.retryAfter, b.cfg.Now()); ok {
				delay = min(d, b.cfg.Retry.MaxRetryAfter)
			}
		}
		if err := b.cfg.Sleep(ctx, delay); err != nil {
			return openai.ChatCompletionResponse{}, fmt.Errorf("llm: %s call cancelled: %w", c.Role, err)
		}
	}
}

// backoff is the delay after the attempt-th failure: Base·2^(attempt-1)
// capped at Max, half fixed and half random.
func (b *Backend) backoff(attempt int) time.Duration {
	rc := b.cfg.Retry
	d := rc.Base
	for i := 1; i < attempt && d < rc.Max; i++ {
		d *= 2
	}
	d = min(d, rc.Max)
	return d/2 + time.Duration(b.cfg.Rand()*float64(d/2))
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 && s < 1e6 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
