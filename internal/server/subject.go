package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// bareWords are the messages of an answer that says what went wrong but
// not to what: the sentinel's words alone, left when the error carried no
// words of ours (a store's "debate get: not found") or only internal ones.
var bareWords = map[codes.Code][]string{
	codes.NotFound:           {debate.ErrNotFound.Error(), ""},
	codes.FailedPrecondition: {debate.ErrFailedPrecondition.Error(), ""},
	codes.Aborted:            {debate.ErrConflict.Error(), ""},
	codes.AlreadyExists:      {debate.ErrAlreadyExists.Error(), ""},
}

// subjectUnary names the request's subject (`debate "d1"`, `gate "g1" of
// debate "d1"`) in a NotFound, FailedPrecondition, Aborted or
// AlreadyExists answer that would otherwise read "not found" alone. It is
// the last interceptor, so every RPC, including those added later, gets it.
func subjectUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err != nil {
		err = withSubject(err, req)
	}
	return resp, err
}

// subjectStream is subjectUnary for streams: the subject is the stream's
// first request.
func subjectStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	fs := &firstRecv{ServerStream: ss}
	err := handler(srv, fs)
	if err != nil && fs.first != nil {
		err = withSubject(err, fs.first)
	}
	return err
}

// firstRecv remembers the first message a stream received.
type firstRecv struct {
	grpc.ServerStream
	first any
}

func (f *firstRecv) RecvMsg(m any) error {
	err := f.ServerStream.RecvMsg(m)
	if err == nil && f.first == nil {
		f.first = m
	}
	return err
}

// withSubject rewrites err's message when it is bare (see bareWords) to name
// what the request was about; any other error is returned unchanged.
func withSubject(err error, req any) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	words, ok := bareWords[st.Code()]
	if !ok || !slices.Contains(words, st.Message()) {
		return err
	}
	m, ok := req.(proto.Message)
	if !ok {
		return err
	}
	subject := requestSubject(m.ProtoReflect())
	if subject == "" {
		return err
	}
	var msg string
	switch st.Code() {
	case codes.NotFound:
		msg = subject + ": not found"
	case codes.FailedPrecondition:
		msg = subject + " is not in a state that allows this request: failed precondition"
	case codes.Aborted:
		msg = subject + " was changed by another request at the same time; try again: conflict"
	case codes.AlreadyExists:
		msg = subject + ": already exists"
	}
	out := st.Proto()
	out.Message = msg
	return status.FromProto(out).Err()
}

// idNouns names the things an id field of a request identifies, as a user
// says them.
var idNouns = map[string]string{
	"api_key_id":  "API key",
	"key_id":      "API key",
	"tenant_id":   "tenant",
	"deal_id":     "deal",
	"debate_id":   "debate",
	"gate_id":     "gate",
	"claim_id":    "claim",
	"defect_id":   "defect",
	"evidence_id": "evidence",
}

// requestSubject describes the thing a request names by its top-level id
// fields, innermost first: `gate "g1" of debate "d1"`; "" if it names
// none. A field ending in _id whose noun is not known is named by its
// field name.
func requestSubject(m protoreflect.Message) string {
	var parts []string
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
			continue
		}
		name := string(fd.Name())
		noun, known := idNouns[name]
		if !known && !strings.HasSuffix(name, "_id") {
			continue
		}
		if !known {
			noun = strings.ReplaceAll(strings.TrimSuffix(name, "_id"), "_", " ")
		}
		v := m.Get(fd).String()
		if v == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %q", noun, v))
	}
	// The later field is the more specific (debate_id = 1, gate_id = 2).
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, " of ")
}
