package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	openai "github.com/sashabaranov/go-openai"

	"github.com/debated/debated/internal/redact"
)

// ExcerptBytes bounds the part of an upstream error body an UpstreamError
// keeps (after redaction).
const ExcerptBytes = 160

// Classes of UpstreamError.
const (
	ClassUnauthorized = "unauthorized"  // 401
	ClassForbidden    = "forbidden"     // 403
	ClassNotFound     = "not_found"     // 404: wrong base URL or model
	ClassBadRequest   = "bad_request"   // other 4xx
	ClassRateLimited  = "rate_limited"  // 429
	ClassServer       = "server_error"  // 5xx
	ClassTimeout      = "timeout"       // the call's timeout
	ClassTransport    = "transport"     // no HTTP answer (refused, reset, DNS)
	ClassBadResponse  = "bad_response"  // a 2xx the client could not read
	ClassUnknown      = "unknown_error" // anything else
)

// UpstreamError is a failed model call as the service keeps it: the HTTP
// status, a class, and a short excerpt of what the endpoint said with every
// configured secret and credential-shaped token masked. It never holds the
// body verbatim: an endpoint may echo the request's bearer key in it, and
// this text reaches logs and node.retry / node.failed events, which can
// never be removed from a ledger.
type UpstreamError struct {
	Status  int    // HTTP status, 0 when there was no answer
	Class   string // one of the Class constants
	Timeout bool   // the call's own timeout expired
	Excerpt string // redacted, at most ExcerptBytes bytes (plus "…")
}

// Error implements error.
func (e *UpstreamError) Error() string {
	s := e.Class
	if e.Status != 0 {
		s = fmt.Sprintf("status %d (%s)", e.Status, e.Class)
	}
	if e.Excerpt != "" {
		s += ": " + e.Excerpt
	}
	return s
}

// Unwrap returns context.DeadlineExceeded for a timed-out call, so callers
// can tell a timeout with errors.Is.
func (e *UpstreamError) Unwrap() error {
	if e.Timeout {
		return context.DeadlineExceeded
	}
	return nil
}

// upstreamError classifies a failed call and keeps a redacted excerpt of
// what the endpoint said: the error message of an OpenAI-style error body,
// the raw body otherwise, or the transport error's text.
func upstreamError(err error, status int, timedOut bool, r *redact.Redactor) *UpstreamError {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	text := ""
	switch {
	case timedOut:
		// The text would only repeat "context deadline exceeded".
	case errors.As(err, &apiErr):
		status = max(status, apiErr.HTTPStatusCode)
		text = cmp.Or(apiErr.Message, apiErr.Type)
	case errors.As(err, &reqErr):
		status = max(status, reqErr.HTTPStatusCode)
		text = string(reqErr.Body)
		if text == "" && reqErr.Err != nil {
			text = reqErr.Err.Error()
		}
	default:
		text = err.Error()
	}
	return &UpstreamError{Status: status, Class: classify(status, timedOut), Timeout: timedOut,
		Excerpt: r.Upstream(text, ExcerptBytes)}
}

func classify(status int, timedOut bool) string {
	switch {
	case timedOut:
		return ClassTimeout
	case status == 0:
		return ClassTransport
	case status == http.StatusUnauthorized:
		return ClassUnauthorized
	case status == http.StatusForbidden:
		return ClassForbidden
	case status == http.StatusNotFound:
		return ClassNotFound
	case status == http.StatusRequestTimeout:
		return ClassTimeout
	case status == http.StatusTooManyRequests:
		return ClassRateLimited
	case status >= 500:
		return ClassServer
	case status >= 400:
		return ClassBadRequest
	case status >= 200 && status < 300:
		return ClassBadResponse
	}
	return ClassUnknown
}

// redactResponse masks the configured secrets (not shapes: this is the
// model's answer, content of the debate) in what the model said, before it
// is cached, parsed or recorded: an endpoint echoing the key in a 200 answer
// must not seal it into the ledger either.
func (b *Backend) redactResponse(resp *openai.ChatCompletionResponse) {
	for i := range resp.Choices {
		m := &resp.Choices[i].Message
		m.Content = b.cfg.Redactor.Secrets(m.Content)
		m.ReasoningContent = b.cfg.Redactor.Secrets(m.ReasoningContent)
		for j := range m.ToolCalls {
			m.ToolCalls[j].Function.Arguments = b.cfg.Redactor.Secrets(m.ToolCalls[j].Function.Arguments)
		}
	}
}
