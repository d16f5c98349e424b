package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// restQueryErrors gives the REST routes' query-parameter errors, which
// vanguard answers before any interceptor runs, the shape of every other
// bad request: InvalidArgument (400) with a field violation naming the
// parameter. Vanguard answers an unknown parameter with Unknown (500) and
// a value that does not parse with InvalidArgument but no field. Only the
// error answers of REST calls with a query string are held and rewritten;
// everything else passes through untouched.
func restQueryErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" || !strings.HasPrefix(r.URL.Path, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		rw := &queryErrorWriter{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		rw.finish()
	})
}

// queryErrorWriter holds a 400 or 500 answer until the handler is done.
type queryErrorWriter struct {
	http.ResponseWriter
	held int // the status held, 0 when passing through
	body bytes.Buffer
}

func (w *queryErrorWriter) WriteHeader(code int) {
	if code == http.StatusBadRequest || code == http.StatusInternalServerError {
		w.held = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *queryErrorWriter) Write(b []byte) (int, error) {
	if w.held != 0 {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes through unless an answer is held (vanguard and grpc's
// ServeHTTP need a Flusher).
func (w *queryErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.held == 0 {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *queryErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Vanguard's words for the two errors (connectrpc.com/vanguard params.go
// and router.go).
var (
	unknownParam = regexp.MustCompile(`^unknown field in field path "([^"]+)": element "[^"]*" does not correspond to any field of type ([\w.]+)$`)
	badParam     = regexp.MustCompile(`^invalid parameter "([^"]+)"(?: value for type "(\w+)")?: (.*)$`)
)

func (w *queryErrorWriter) finish() {
	if w.held == 0 {
		return
	}
	if st := queryError(w.body.Bytes()); st != nil {
		if b, err := protojson.Marshal(st.Proto()); err == nil {
			h := w.Header()
			h.Del("Content-Length")
			h.Set("Content-Type", "application/json")
			w.ResponseWriter.WriteHeader(http.StatusBadRequest)
			_, _ = w.ResponseWriter.Write(b)
			return
		}
	}
	w.ResponseWriter.WriteHeader(w.held)
	_, _ = w.ResponseWriter.Write(w.body.Bytes())
}

// queryError is the InvalidArgument status for a vanguard error body about
// a query parameter, or nil when the body is about something else.
func queryError(body []byte) *status.Status {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return nil
	}
	var field, desc string
	if m := unknownParam.FindStringSubmatch(e.Message); m != nil {
		field, desc = m[1], "is not a parameter of this call"
		if names := paramNames(protoreflect.FullName(m[2])); names != "" {
			desc += " (its parameters: " + names + ")"
		}
	} else if m := badParam.FindStringSubmatch(e.Message); m != nil {
		field, desc = m[1], "cannot be read: "+strconv.Quote(m[3])
		if kind := m[2]; kind != "" {
			desc = "must be " + paramKind(kind) + ", not " + strconv.Quote(m[3])
		}
	} else {
		return nil
	}
	st, err := status.New(codes.InvalidArgument, "invalid argument: "+field+": "+desc).WithDetails(
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: desc}}})
	if err != nil {
		return nil
	}
	return st
}

// paramNames lists the scalar fields of the request message name, which a
// query string can set.
func paramNames(name protoreflect.FullName) string {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return ""
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return ""
	}
	var names []string
	fields := md.Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); f.Message() == nil {
			names = append(names, string(f.Name()))
		}
	}
	return strings.Join(names, ", ")
}

// paramKind says what a value of a protobuf scalar kind looks like.
func paramKind(kind string) string {
	switch kind {
	case "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64":
		return "a whole number"
	case "float", "double":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "a " + kind
}
