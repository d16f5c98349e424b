package server

import (
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// invalidUTF8Mark replaces a request string that is not valid UTF-8 when
// the request is decoded, so that the validation interceptor can name the
// field (textViolations). It starts with a NUL byte, which no accepted
// string holds, so it can never be mistaken for a client's text.
const invalidUTF8Mark = "\x00\x00invalid UTF-8"

// utf8Codec is gRPC's proto codec, except that a request whose strings are
// not valid UTF-8 is decoded with those strings marked instead of failing.
// grpc-go answers a decoding failure INTERNAL ("failed to unmarshal")
// before any interceptor runs; with the mark, the request reaches the
// validation interceptor and is answered INVALID_ARGUMENT naming the field.
// Only the failure path does extra work: a valid request is decoded once.
type utf8Codec struct {
	encoding.CodecV2
}

func newUTF8Codec() utf8Codec { return utf8Codec{CodecV2: encoding.GetCodecV2("proto")} }

// maxPooledMarshal is the largest message that Marshal encodes into a
// buffer of gRPC's default pool: 32 KiB, the pool's largest size below
// 1 MiB (its sizes are 256 B, 4, 16 and 32 KiB, 1 MiB).
const maxPooledMarshal = 32 << 10

// Marshal encodes v as gRPC's proto codec does, except that a message
// larger than maxPooledMarshal gets a buffer of its own size. gRPC's codec
// takes every message above 32 KiB and up to 1 MiB from the pool's 1 MiB
// buffers, and the buffer is held until the transport has written the
// message: with two thousand watchers each sent a 64 KiB batch of their
// own (a watcher catching up, the last message with its checkpoint) that
// was two gigabytes of buffers for 128 MB of messages, and the server's
// RSS went from 336 MiB to over 1 GiB (docs/benchmarks.md, "Watchers at
// dashboard scale"). Smaller messages keep the pool, as before.
func (c utf8Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return c.CodecV2.Marshal(v)
	}
	size := proto.Size(m)
	if size <= maxPooledMarshal {
		return c.CodecV2.Marshal(v)
	}
	// UseCachedSize: the size was computed just above, and a message being
	// sent is not changed meanwhile (gRPC's codec relies on the same).
	buf, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, 0, size), m)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
}

func (c utf8Codec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	if err == nil || !strings.Contains(err.Error(), "UTF-8") {
		return err
	}
	m, ok := v.(proto.Message)
	if !ok {
		return err
	}
	marked, changed := markInvalidUTF8(data.Materialize(), m.ProtoReflect().Descriptor(), 0)
	if !changed {
		return err
	}
	proto.Reset(m)
	if uerr := proto.Unmarshal(marked, m); uerr != nil {
		return err
	}
	return nil
}

// maxMarkDepth bounds the recursion into nested messages (protobuf's own
// default recursion limit).
const maxMarkDepth = 100

// markInvalidUTF8 returns b, a message of md on the wire, with every string
// field (at any depth, map keys and values included) that is not valid
// UTF-8 replaced by invalidUTF8Mark, and whether it replaced any. Fields it
// cannot parse are copied as they are: the decoder that runs next reports
// them.
func markInvalidUTF8(b []byte, md protoreflect.MessageDescriptor, depth int) ([]byte, bool) {
	if depth > maxMarkDepth {
		return b, false
	}
	out := make([]byte, 0, len(b))
	changed := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return append(out, b...), changed
		}
		fieldLen := protowire.ConsumeFieldValue(num, typ, b[n:])
		if fieldLen < 0 {
			return append(out, b...), changed
		}
		whole := b[:n+fieldLen]
		b = b[n+fieldLen:]
		fd := md.Fields().ByNumber(num)
		if fd == nil || typ != protowire.BytesType {
			out = append(out, whole...)
			continue
		}
		val, _ := protowire.ConsumeBytes(whole[n:])
		switch fd.Kind() {
		case protoreflect.StringKind:
			if !utf8.Valid(val) {
				out = protowire.AppendTag(out, num, typ)
				out = protowire.AppendString(out, invalidUTF8Mark)
				changed = true
				continue
			}
		case protoreflect.MessageKind:
			if sub, ok := markInvalidUTF8(val, fd.Message(), depth+1); ok {
				out = protowire.AppendTag(out, num, typ)
				out = protowire.AppendBytes(out, sub)
				changed = true
				continue
			}
		}
		out = append(out, whole...)
	}
	return out, changed
}
