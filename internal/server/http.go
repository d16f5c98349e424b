package server

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	connectcors "connectrpc.com/cors"
	"connectrpc.com/vanguard"
	"connectrpc.com/vanguard/vanguardgrpc"
	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/rs/cors"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// HTTPConfig configures the browser-facing HTTP handler.
type HTTPConfig struct {
	// CORSOrigins are the origins allowed to call the API from a browser
	// ("*" allows any). Empty allows the same origin only: no CORS headers
	// are sent and browsers refuse cross-origin calls.
	CORSOrigins []string
	// Static, if set, is served for every path that is not an API route
	// (the dashboard). Unknown files answer index.html so client-side
	// routes load the page.
	Static fs.FS
}

// HTTPHandler returns the handler of the HTTP side of the port: Connect,
// gRPC-Web and REST+JSON (from the google.api.http annotations) transcoded
// by vanguard onto the same *grpc.Server, so every interceptor
// (authentication, tenant isolation, rate limits, validation, tracing)
// applies to every protocol; and the static dashboard for other paths.
// Returns an error if the transcoder cannot be built from the services.
func (s *Server) HTTPHandler(cfg HTTPConfig) (http.Handler, error) {
	opts := []vanguard.TranscoderOption{
		vanguard.WithCodec(func(res vanguard.TypeResolver) vanguard.Codec { return newJSONCodec(res) }),
	}
	if cfg.Static != nil {
		opts = append(opts, vanguard.WithUnknownHandler(staticHandler(cfg.Static)))
	}
	t, err := vanguardgrpc.NewTranscoder(s.grpc, opts...)
	if err != nil {
		return nil, fmt.Errorf("server: transcoder: %w", err)
	}
	h := restQueryErrors(t)
	if len(cfg.CORSOrigins) > 0 {
		h = cors.New(cors.Options{
			AllowedOrigins: cfg.CORSOrigins,
			AllowedMethods: connectcors.AllowedMethods(),
			// Authorization carries the API key; the rest are what Connect
			// and gRPC-Web send.
			AllowedHeaders: append(connectcors.AllowedHeaders(), "Authorization"),
			ExposedHeaders: connectcors.ExposedHeaders(),
			MaxAge:         7200,
		}).Handler(h)
	}
	return h, nil
}

// staticHandler serves files of root, and index.html for paths that name no
// file (the dashboard routes with its own hash router, but a reload of any
// path should still land on the page). API paths never reach it: the
// transcoder answers them first.
func staticHandler(root fs.FS) http.Handler {
	files := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		if strings.HasPrefix(name, "v1/") || strings.HasPrefix(name, "debated.v1.") || strings.HasPrefix(name, "grpc.") {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if name != "" {
			if st, err := fs.Stat(root, name); err != nil || st.IsDir() {
				r = r.Clone(r.Context())
				r.URL.Path = "/"
			}
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	})
}

// jsonCodec is vanguard's JSON codec that also gives JSON clients each
// ledger event's payload as a JSON value (LedgerEvent.payload) beside the
// canonical payload_json string. Only JSON responses pay for it: the
// binary gRPC path never builds the value.
type jsonCodec struct {
	vanguard.JSONCodec
}

func newJSONCodec(res vanguard.TypeResolver) *jsonCodec {
	return &jsonCodec{JSONCodec: *vanguard.NewJSONCodec(res)}
}

// MarshalAppend implements vanguard.Codec.
func (c *jsonCodec) MarshalAppend(base []byte, msg proto.Message) ([]byte, error) {
	if err := fillPayloads(msg.ProtoReflect()); err != nil {
		return nil, err
	}
	return c.JSONCodec.MarshalAppend(base, msg)
}

// MarshalAppendStable implements vanguard.StableCodec.
func (c *jsonCodec) MarshalAppendStable(base []byte, msg proto.Message) ([]byte, error) {
	if err := fillPayloads(msg.ProtoReflect()); err != nil {
		return nil, err
	}
	return c.JSONCodec.MarshalAppendStable(base, msg)
}

// MarshalAppendField implements vanguard.RESTCodec.
func (c *jsonCodec) MarshalAppendField(base []byte, msg proto.Message, field protoreflect.FieldDescriptor) ([]byte, error) {
	if err := fillPayloads(msg.ProtoReflect()); err != nil {
		return nil, err
	}
	return c.JSONCodec.MarshalAppendField(base, msg, field)
}

// Unmarshal implements vanguard.Codec. It reads JSON requests only (the
// server side speaks binary gRPC), so a body that does not decode, such as
// a number where the API wants a decimal string, is the client's error:
// INVALID_ARGUMENT (HTTP 400), not the internal error vanguard would make
// of it.
func (c *jsonCodec) Unmarshal(data []byte, msg proto.Message) error {
	if err := c.JSONCodec.Unmarshal(data, msg); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, bodyError(err))
	}
	return nil
}

// UnmarshalField implements vanguard.RESTCodec, as Unmarshal.
func (c *jsonCodec) UnmarshalField(data []byte, msg proto.Message, field protoreflect.FieldDescriptor) error {
	if err := c.JSONCodec.UnmarshalField(data, msg, field); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, bodyError(err))
	}
	return nil
}

// bodyError says what is wrong with a request body without the decoder's
// "proto:" prefix (which protojson follows with a space or, at random, a
// no-break space): "request body: (line 1:12): invalid value for string
// field deal_id: 5".
func bodyError(err error) error {
	msg := strings.ReplaceAll(err.Error(), "\u00a0", " ")
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "proto:"))
	return errors.New("request body: " + msg)
}

var ledgerEventName = (&debatedv1.LedgerEvent{}).ProtoReflect().Descriptor().FullName()

// fillPayloads sets payload from payload_json on every LedgerEvent in m.
// Only messages that can contain a LedgerEvent are walked.
func fillPayloads(m protoreflect.Message) error {
	if m.Descriptor().FullName() == ledgerEventName {
		ev, ok := m.Interface().(*debatedv1.LedgerEvent)
		if !ok || ev.GetPayloadJson() == "" || ev.GetPayload() != nil {
			return nil
		}
		v := &structpb.Value{}
		if err := protojson.Unmarshal([]byte(ev.GetPayloadJson()), v); err != nil {
			return fmt.Errorf("ledger event %d payload: %w", ev.GetSeq(), err)
		}
		ev.Payload = v
		return nil
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || !mayHoldEvent(fd.Message()) {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if err = fillPayloads(l.Get(i).Message()); err != nil {
					return false
				}
			}
		case fd.IsMap():
			return true
		default:
			err = fillPayloads(v.Message())
		}
		return err == nil
	})
	return err
}

// mayHoldEvent reports whether messages of d can contain a LedgerEvent: it
// is one, or a debated.v1 message with a field of that kind (one level of
// nesting is all the API has).
func mayHoldEvent(d protoreflect.MessageDescriptor) bool {
	if d.FullName() == ledgerEventName {
		return true
	}
	if d.ParentFile().Package() != "debated.v1" {
		return false
	}
	fields := d.Fields()
	for i := range fields.Len() {
		if m := fields.Get(i).Message(); m != nil && m.FullName() == ledgerEventName {
			return true
		}
	}
	return false
}

// ServeAll serves native gRPC and h on one listener, split per connection
// (see splitListener), and h alone on each of extra (DEBATED_HTTP_LISTEN),
// until Shutdown. It returns nil after a graceful shutdown.
func (s *Server) ServeAll(lis net.Listener, h http.Handler, extra ...net.Listener) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: prefaceTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	s.http = hs
	s.mu.Unlock()
	split := newSplitListener(lis)
	go split.run()
	errc := make(chan error, 2+len(extra))
	go func() { errc <- s.Serve(split.grpcL) }()
	for _, l := range append([]net.Listener{split.httpL}, extra...) {
		go func() {
			err := hs.Serve(l)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			errc <- err
		}()
	}
	defer split.close()
	var first error
	for range 2 + len(extra) {
		if err := <-errc; err != nil && first == nil {
			first = err
			// One side failed: stop the others rather than serve half.
			split.close()
			_ = hs.Close()
			s.grpc.Stop()
		}
	}
	return first
}
