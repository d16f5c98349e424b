package main

import (
	"cmp"
	"context"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// setupTracing exports traces over OTLP when the standard OTEL_* variables
// name an endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, and OTEL_SDK_DISABLED is not true);
// otherwise tracing stays off. The returned function flushes and stops it.
func setupTracing(ctx context.Context, getenv func(string) string, log *slog.Logger) (func(context.Context), error) {
	off := func(context.Context) {}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") ||
		(getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "") {
		return off, nil
	}
	exp, err := otlptracegrpc.New(ctx) // reads the OTEL_EXPORTER_OTLP_* variables
	if err != nil {
		return off, err
	}
	name := cmp.Or(getenv("OTEL_SERVICE_NAME"), "debated")
	res, err := sdkresource.Merge(sdkresource.Default(), sdkresource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		return off, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	log.InfoContext(ctx, "exporting traces over OTLP", slog.String("service", name))
	return func(ctx context.Context) {
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("flushing traces", slog.String("error", err.Error()))
		}
	}, nil
}

// traceHandler adds the trace and span ids of the context to every log
// record, so logs and traces join up.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(as)}
}
func (h traceHandler) WithGroup(g string) slog.Handler { return traceHandler{h.Handler.WithGroup(g)} }
