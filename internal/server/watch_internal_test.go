package server

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/stream"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
)

func entries(n int, status debate.DebateStatus) []*stream.Entry {
	out := make([]*stream.Entry, n)
	for i := range out {
		out[i] = &stream.Entry{Status: status, Event: debate.Event{
			DebateID: "d-1", Seq: int64(i + 1), Type: "agent.output", Actor: "advocate", Node: "open", Round: 2,
			Payload: []byte(`{"text":"é \"q\""}`), Time: time.Date(2026, 11, 26, 9, 0, i, 1000, time.UTC),
			PrevHash: "p", Hash: "h", KeyID: "1:k", Signature: "sig",
		}}
	}
	return out
}

// TestRawMessageIsTheMessage: the message assembled from the events'
// memoised encodings decodes to the message built field by field (one
// event in event, several in events, the last one's status), so every
// client reads a prepared message as it would read the plain one.
func TestRawMessageIsTheMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		n      int
		status debate.DebateStatus
	}{
		{"one live event", 1, debate.DebateRunning},
		{"a batch", 5, debate.DebateRunning},
		{"a batch ending the debate", 3, debate.DebateCompleted},
		{"no status", 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := stream.Batch{Entries: entries(tc.n, tc.status)}
			wire, err := proto.Marshal(rawMessage(b))
			require.NoError(t, err)
			var got debatedv1.WatchDebateResponse
			require.NoError(t, proto.Unmarshal(wire, &got))
			want := watchResponse(b)
			require.True(t, proto.Equal(want, &got), "got %v\nwant %v", &got, want)
			if tc.n == 1 {
				require.NotNil(t, got.GetEvent())
				require.Empty(t, got.GetEvents())
			} else {
				require.Nil(t, got.GetEvent())
				require.Len(t, got.GetEvents(), tc.n)
			}
			plain, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
			require.NoError(t, err)
			require.Equal(t, plain, wire, "byte for byte the plain encoding")
		})
	}
}

// sendAll is a DebateService whose WatchDebate sends each of its entries as
// a one-event batch through a watchSender, as the hub's live path does.
type sendAll struct {
	debatedv1.UnimplementedDebateServiceServer
	entries []*stream.Entry
}

func (s *sendAll) WatchDebate(_ *debatedv1.WatchDebateRequest, srv grpc.ServerStreamingServer[debatedv1.WatchDebateResponse]) error {
	w := newWatchSender(srv)
	for _, e := range s.entries {
		if err := w.send(stream.Batch{Entries: []*stream.Entry{e}}); err != nil {
			return err
		}
	}
	return nil
}

// TestPreparedOncePerCompression: watchers sent gzip and watchers sent
// plain protobuf share the same batches; each reads every event exactly
// as it is, and each batch was prepared once for each of the two, so the
// gzip watchers did not compress their own copies.
func TestPreparedOncePerCompression(t *testing.T) {
	t.Parallel()
	svc := &sendAll{entries: entries(20, debate.DebateRunning)}
	for _, e := range svc.entries {
		e.Event.Payload = []byte(`{"text":"` + strings.Repeat("compressible ", 50) + `"}`)
	}
	gs := grpc.NewServer()
	debatedv1.RegisterDebateServiceServer(gs, svc)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	client := debatedv1.NewDebateServiceClient(conn)

	for i := range 6 {
		var opts []grpc.CallOption
		if i%2 == 0 {
			opts = append(opts, grpc.UseCompressor(gzip.Name))
		}
		st, err := client.WatchDebate(t.Context(), &debatedv1.WatchDebateRequest{DebateId: "d-1"}, opts...)
		require.NoError(t, err)
		for _, e := range svc.entries {
			msg, err := st.Recv()
			require.NoError(t, err, "watcher %d", i)
			want := watchResponse(stream.Batch{Entries: []*stream.Entry{e}})
			require.True(t, proto.Equal(want, msg), "watcher %d, seq %d", i, e.Event.Seq)
		}
		_, err = st.Recv()
		require.ErrorIs(t, err, io.EOF)
	}
	for _, e := range svc.entries {
		v, err := stream.Batch{Entries: []*stream.Entry{e}}.Shared(func() (any, error) { return nil, nil })
		require.NoError(t, err)
		set, ok := v.(*byCompression[preparedMsg])
		require.True(t, ok, "seq %d: the batch's memo holds its prepared messages", e.Event.Seq)
		require.NotNil(t, set.plain.msg, "seq %d: prepared for the plain watchers", e.Event.Seq)
		require.NotNil(t, set.gzip.msg, "seq %d: prepared for the gzip watchers", e.Event.Seq)
	}
}
