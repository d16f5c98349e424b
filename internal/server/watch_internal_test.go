package server

import (
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/stream"
	"github.com/stretchr/testify/require"
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
