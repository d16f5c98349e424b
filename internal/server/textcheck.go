package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxTextViolations bounds how many bad strings one answer names: a request
// of a million NULs gets a short answer.
const maxTextViolations = 20

// textViolations names every string of msg (fields, repeated and map
// entries, map keys, nested messages of any depth, google.protobuf.Struct
// values) that holds a NUL byte or is not valid UTF-8. No store keeps such
// text faithfully (PostgreSQL refuses NUL in text and jsonb with SQLSTATE
// 22021 / 22P05; JSON cannot carry invalid UTF-8), so it is refused at the
// door, for every RPC and every field, including those added later.
func textViolations(msg proto.Message) []debate.FieldViolation {
	var out []debate.FieldViolation
	walkText(msg.ProtoReflect(), "", &out)
	return out
}

func badText(s string) string {
	switch {
	case s == invalidUTF8Mark: // what utf8Codec decoded invalid UTF-8 as
		return "must be valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "must not contain a NUL byte"
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	}
	return ""
}

func walkText(m protoreflect.Message, prefix string, out *[]debate.FieldViolation) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if len(*out) >= maxTextViolations {
			return false
		}
		path := prefix + string(fd.Name())
		add := func(field, s string) {
			if why := badText(s); why != "" && len(*out) < maxTextViolations {
				*out = append(*out, debate.FieldViolation{Field: field, Description: why})
			}
		}
		switch {
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				key := k.Value()
				var elem string
				if fd.MapKey().Kind() == protoreflect.StringKind {
					if why := badText(key.String()); why != "" && len(*out) < maxTextViolations {
						// The key itself cannot be printed faithfully: name the map.
						*out = append(*out, debate.FieldViolation{Field: path, Description: "keys " + why})
						return true
					}
					elem = fmt.Sprintf("%s[%s]", path, strconv.Quote(key.String()))
				} else {
					elem = fmt.Sprintf("%s[%v]", path, key.Interface())
				}
				switch fd.MapValue().Kind() {
				case protoreflect.StringKind:
					add(elem, mv.String())
				case protoreflect.MessageKind, protoreflect.GroupKind:
					walkText(mv.Message(), elem+".", out)
				}
				return len(*out) < maxTextViolations
			})
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				elem := fmt.Sprintf("%s[%d]", path, i)
				switch fd.Kind() {
				case protoreflect.StringKind:
					add(elem, l.Get(i).String())
				case protoreflect.MessageKind, protoreflect.GroupKind:
					walkText(l.Get(i).Message(), elem+".", out)
				}
			}
		case fd.Kind() == protoreflect.StringKind:
			add(path, v.String())
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			walkText(v.Message(), path+".", out)
		}
		return len(*out) < maxTextViolations
	})
}

// checkRequest runs the checks every request passes before its handler: its
// text (textViolations), then its protovalidate rules.
func (s *Server) checkRequest(ctx context.Context, req any) error {
	msg, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	if vs := textViolations(msg); len(vs) > 0 {
		return badRequest(vs)
	}
	if err := s.validate.Validate(msg); err != nil {
		return toStatus(ctx, s.log, validationError(err))
	}
	if vs := idViolations(msg); len(vs) > 0 {
		return badRequest(vs)
	}
	return nil
}

// validateStream checks every message a streaming call receives as
// validateUnary checks a unary request.
func (s *Server) validateStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &checkedStream{ServerStream: ss, s: s})
}

type checkedStream struct {
	grpc.ServerStream
	s *Server
}

func (c *checkedStream) RecvMsg(m any) error {
	if err := c.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return c.s.checkRequest(c.Context(), m)
}
