package server

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/stream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// WatchDebate streams a debate's ledger (see the proto's contract): the
// hub hands it batches, one event on the live path and several to a
// watcher that is behind, and each is sent as one message whose encoding
// is shared by every watcher of the debate (watchSender).
func (ds *debateService) WatchDebate(req *debatedv1.WatchDebateRequest, srv grpc.ServerStreamingServer[debatedv1.WatchDebateResponse]) error {
	ctx := srv.Context()
	if err := ds.s.validate.Validate(req); err != nil {
		return toStatus(ctx, ds.s.log, validationError(err))
	}
	w := newWatchSender(srv)
	last := req.GetAfterSeq()
	err := ds.Hub.Watch(ctx, req.GetDebateId(), last, func(b stream.Batch) error {
		if ds.tlog != nil && b.Status().Terminal() {
			// The stream's last message carries the checkpoint that covers
			// the debate's final head: this watcher's own message.
			cp, err := ds.tlog.latestCheckpoint(ctx)
			if err != nil {
				return err
			}
			if err := w.sendLast(b, cp); err != nil {
				return err
			}
			last = b.Last().Event.Seq
			return nil
		}
		if err := w.send(b); err != nil {
			return err
		}
		last = b.Last().Event.Seq
		return nil
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, stream.ErrClosed):
		return status.Errorf(codes.Unavailable, "server shutting down: resume with after_seq=%d", last)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return toStatus(ctx, ds.s.log, err)
}

// watchSender sends a watcher's batches. Encode once, send many: an event's
// LedgerEvent is converted and marshalled once per debate (the entry's
// memo) and a message's bytes assembled once per batch (the batch's shared
// memo), by whichever watcher needs them first. For a stream that speaks
// plain protobuf the message goes out as a grpc.PreparedMsg, prepared once
// per batch for the watchers sent uncompressed and once for those sent
// gzip (sharedEncoding), so the watcher does no encoding or compressing
// at all; any other stream (another codec or compressor) is sent the
// message itself.
type watchSender struct {
	srv      grpc.ServerStreamingServer[debatedv1.WatchDebateResponse]
	prepared bool
	gzip     bool // the stream's messages are sent gzip-compressed
}

func newWatchSender(srv grpc.ServerStreamingServer[debatedv1.WatchDebateResponse]) *watchSender {
	prepared, gzip := sharedEncoding(srv.Context())
	return &watchSender{srv: srv, prepared: prepared, gzip: gzip}
}

// sharedEncoding reports whether a PreparedMsg encoded on the stream is
// byte for byte what it would be on any other stream sent the same way,
// and whether that way is gzip. It is for the default protobuf codec,
// uncompressed or with grpc's gzip (the server answers a client that
// compresses with its compressor, and gzip writes the same bytes at the
// same level; PreparedMsg.Encode takes the codec and compressor from the
// stream). Streams it cannot tell are sent their own messages.
func sharedEncoding(ctx context.Context) (shared, gzip bool) {
	st, ok := grpc.ServerTransportStreamFromContext(ctx).(interface {
		SendCompress() string
		ContentSubtype() string
	})
	if !ok {
		return false, false
	}
	switch st.ContentSubtype() {
	case "", "proto":
	default:
		return false, false
	}
	switch st.SendCompress() {
	case "", "identity":
		return true, false
	case "gzip":
		return true, true
	}
	return false, false
}

// byCompression holds one of a batch's memos per compression a watcher can
// be sent: none or gzip.
type byCompression[T any] struct{ plain, gzip T }

func (b *byCompression[T]) of(gzip bool) *T {
	if gzip {
		return &b.gzip
	}
	return &b.plain
}

// preparedMsg is a batch's message, ready to send on a stream of its
// compression; prepared once.
type preparedMsg struct {
	once sync.Once
	msg  *grpc.PreparedMsg
	err  error
}

func (w *watchSender) send(b stream.Batch) error {
	if !w.prepared {
		return w.srv.Send(watchResponse(b))
	}
	v, err := b.Shared(func() (any, error) { return &byCompression[preparedMsg]{}, nil })
	if err != nil {
		return err
	}
	p := v.(*byCompression[preparedMsg]).of(w.gzip)
	p.once.Do(func() {
		m := &grpc.PreparedMsg{}
		if p.err = m.Encode(w.srv, rawMessage(b)); p.err == nil {
			p.msg = m
		}
	})
	if p.err != nil {
		return p.err
	}
	return w.srv.SendMsg(p.msg)
}

// lastMsg is a terminal batch's memo: its message prepared with the
// checkpoint it was last sent with.
type lastMsg struct {
	mu  sync.Mutex
	cp  *debatedv1.Checkpoint
	msg *grpc.PreparedMsg
}

// sendLast sends a terminal batch with cp, the stream's last message. The
// watchers of a debate that just ended share the checkpoint (one flight of
// latestCheckpoint) and so, when they are sent the same batch, its
// prepared message: without it each encoded its own, up to a 64 KiB batch.
func (w *watchSender) sendLast(b stream.Batch, cp *debatedv1.Checkpoint) error {
	if w.prepared {
		v, err := b.Shared(func() (any, error) { return &byCompression[lastMsg]{}, nil })
		if err != nil {
			return err
		}
		if set, ok := v.(*byCompression[lastMsg]); ok {
			last := set.of(w.gzip)
			last.mu.Lock()
			if last.cp != cp || last.msg == nil {
				m := rawMessage(b)
				m.Checkpoint = cp
				p := &grpc.PreparedMsg{}
				if err := p.Encode(w.srv, m); err != nil {
					last.mu.Unlock()
					return err
				}
				last.cp, last.msg = cp, p
			}
			p := last.msg
			last.mu.Unlock()
			return w.srv.SendMsg(p)
		}
	}
	msg := watchResponse(b)
	msg.Checkpoint = cp
	return w.srv.Send(msg)
}

// rawMessage assembles the batch's WatchDebateResponse from its events'
// encodings: a message's wire form is its fields one after another, so a
// batch is the events' memoised bytes, each under field 3 (or one under
// field 1), and the status. The result is a message whose unknown fields
// are those bytes: marshalling it copies them as they are.
func rawMessage(b stream.Batch) *debatedv1.WatchDebateResponse {
	// Fields in number order, as proto.Marshal writes them: event (1),
	// status (2), events (3).
	size := 16
	for _, e := range b.Entries {
		size += len(eventWire(e)) + 2*binary.MaxVarintLen64
	}
	buf := make([]byte, 0, size)
	if len(b.Entries) == 1 {
		buf = protowire.AppendTag(buf, 1, protowire.BytesType)
		buf = protowire.AppendBytes(buf, eventWire(b.Entries[0]))
	}
	if st := apiconv.DebateStatusToProto(b.Status()); st != 0 {
		buf = protowire.AppendTag(buf, 2, protowire.VarintType)
		buf = protowire.AppendVarint(buf, uint64(st))
	}
	if len(b.Entries) > 1 {
		for _, e := range b.Entries {
			buf = protowire.AppendTag(buf, 3, protowire.BytesType)
			buf = protowire.AppendBytes(buf, eventWire(e))
		}
	}
	m := &debatedv1.WatchDebateResponse{}
	m.ProtoReflect().SetUnknown(buf)
	return m
}

// watchResponse is the batch's message built field by field, for streams
// that do not take a prepared one.
func watchResponse(b stream.Batch) *debatedv1.WatchDebateResponse {
	out := &debatedv1.WatchDebateResponse{Status: apiconv.DebateStatusToProto(b.Status())}
	if len(b.Entries) == 1 {
		out.Event = eventProto(b.Entries[0])
		return out
	}
	out.Events = make([]*debatedv1.LedgerEvent, len(b.Entries))
	for i, e := range b.Entries {
		out.Events[i] = eventProto(e)
	}
	return out
}

// encodedEvent is what an entry's memo holds: the event converted and
// marshalled once.
type encodedEvent struct {
	msg  *debatedv1.LedgerEvent
	wire []byte
}

func encoded(e *stream.Entry) encodedEvent {
	v, _ := e.Memo.Get(func() (any, error) {
		msg := apiconv.EventToProto(e.Event)
		// Marshalling a LedgerEvent (strings, numbers, a timestamp) cannot
		// fail; should it, the message goes out without the bytes and the
		// client sees the fault rather than a stalled stream.
		wire, _ := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
		return encodedEvent{msg: msg, wire: wire}, nil
	})
	return v.(encodedEvent)
}

func eventWire(e *stream.Entry) []byte                  { return encoded(e).wire }
func eventProto(e *stream.Entry) *debatedv1.LedgerEvent { return encoded(e).msg }
