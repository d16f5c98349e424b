package watchload

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestScanEventsReadsWhatFullDecodeReads: the lean reader finds each
// event's seq and time, in order, in a lone event and in a batch, skipping
// every other field.
func TestScanEventsReadsWhatFullDecodeReads(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 0, 0, 123456789, time.UTC)
	ev := func(seq int64) *debatedv1.LedgerEvent {
		return &debatedv1.LedgerEvent{DebateId: "d", Seq: seq, EventType: "turn", PayloadJson: `{"a":1}`,
			Time: timestamppb.New(at.Add(time.Duration(seq) * time.Second)), Hash: "ab", Signature: "sig"}
	}
	for _, msg := range []*debatedv1.WatchDebateResponse{
		{Event: ev(7), Status: debatedv1.DebateStatus_DEBATE_STATUS_RUNNING},
		{Events: []*debatedv1.LedgerEvent{ev(8), ev(9), ev(10)}, Status: debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED,
			Checkpoint: &debatedv1.Checkpoint{}},
	} {
		b, err := proto.Marshal(msg)
		require.NoError(t, err)
		var seqs []int64
		var times []time.Time
		require.NoError(t, scanEvents(b, func(seq int64, tm time.Time) error {
			seqs, times = append(seqs, seq), append(times, tm)
			return nil
		}))
		var want []int64
		var wantTimes []time.Time
		for _, e := range append([]*debatedv1.LedgerEvent{msg.GetEvent()}, msg.GetEvents()...) {
			if e != nil {
				want, wantTimes = append(want, e.GetSeq()), append(wantTimes, e.GetTime().AsTime())
			}
		}
		require.Equal(t, want, seqs)
		for i := range times {
			require.True(t, wantTimes[i].Equal(times[i]), "time of seq %d", seqs[i])
		}
	}
	require.Error(t, scanEvents([]byte{0x0a, 0x05, 0x10}, func(int64, time.Time) error { return nil }), "a cut message")
}

// TestWatcherSaw: a watcher takes seqs exactly once and in order, and
// counts the latency of the events after the gate only.
func TestWatcherSaw(t *testing.T) {
	t.Parallel()
	commit := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	now := commit.Add(30 * time.Millisecond)
	w := &watcher{gate: 2}
	for seq := int64(1); seq <= 3; seq++ {
		require.NoError(t, w.saw(seq, commit, now))
	}
	require.Equal(t, int64(3), w.last)
	require.Equal(t, []time.Duration{30 * time.Millisecond}, w.lat, "only the event after the gate")
	require.Equal(t, commit, w.lastTime)

	require.EqualError(t, w.saw(3, commit, now), "got seq 3 after 3", "a repeated seq")
	require.EqualError(t, w.saw(5, commit, now), "got seq 5 after 3", "a gap")
	require.Equal(t, int64(3), w.last, "a refused seq is not recorded")
	require.Len(t, w.lat, 1)
}

// TestWatcherFollow: the receive loop counts messages and bytes, says
// ready once when the gate has been seen, and otherwise reports what
// stopped it: a clean end (nil), a receive error or a seq out of order.
func TestWatcherFollow(t *testing.T) {
	t.Parallel()
	commit := time.Now().Add(-time.Second)
	// stream feeds msgs (each a list of seqs), then err.
	stream := func(msgs [][]int64, err error) (func() (int, error), func(func(int64, time.Time) error) error) {
		i := -1
		recv := func() (int, error) {
			if i+1 == len(msgs) {
				return 0, err
			}
			i++
			return 10 * len(msgs[i]), nil
		}
		events := func(saw func(int64, time.Time) error) error {
			for _, seq := range msgs[i] {
				if err := saw(seq, commit); err != nil {
					return err
				}
			}
			return nil
		}
		return recv, events
	}
	for _, tc := range []struct {
		name   string
		msgs   [][]int64
		end    error
		ready  string // "" for nil
		err    string // w.err after the loop
		n, lat int    // messages received, latencies counted
	}{
		{name: "gate then a clean end", msgs: [][]int64{{1, 2}, {3}, {4}}, end: io.EOF, n: 3, lat: 2},
		{name: "ended before the gate", msgs: [][]int64{{1}}, end: io.EOF, n: 1},
		{name: "receive error before the gate", msgs: [][]int64{{1}}, end: errors.New("reset"), ready: "reset", err: "reset", n: 1},
		{name: "receive error after the gate", msgs: [][]int64{{1, 2}}, end: errors.New("reset"), err: "reset", n: 1},
		{name: "a gap before the gate", msgs: [][]int64{{1, 3}}, end: io.EOF, ready: "got seq 3 after 1", err: "got seq 3 after 1", n: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := &watcher{gate: 2}
			ready := make(chan error, 8) // room for a second ready, which must not come
			recv, events := stream(tc.msgs, tc.end)
			w.follow(ready, recv, events)
			require.Len(t, ready, 1, "ready is said exactly once")
			if got := <-ready; tc.ready == "" {
				require.NoError(t, got)
			} else {
				require.EqualError(t, got, tc.ready)
			}
			if tc.err == "" {
				require.NoError(t, w.err)
			} else {
				require.EqualError(t, w.err, tc.err)
			}
			require.Equal(t, int64(tc.n), w.msgs)
			seqs := 0
			for _, m := range tc.msgs[:tc.n] {
				seqs += len(m)
			}
			require.Equal(t, int64(10*seqs), w.bytes)
			require.Len(t, w.lat, tc.lat)
		})
	}
}

func TestFloorDeliversEveryByte(t *testing.T) {
	res, err := Floor(t.Context(), 3, 3*100_000, 16<<10)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes != 300_000 || res.Conns != 3 || res.Wall <= 0 {
		t.Fatalf("floor: %+v", res)
	}
	if _, err := Floor(t.Context(), 0, 1, 1); err == nil {
		t.Fatal("no connections: want an error")
	}
	med, err := MedianFloor(t.Context(), 3, 2, 2*50_000, 8<<10)
	if err != nil || med.Bytes != 100_000 || med.Conns != 2 {
		t.Fatalf("median floor: %+v, %v", med, err)
	}
}

// TestIdealFanoutRelaysEveryMessage: the ideal fan-out's TCP watchers get
// every message their relay forwards, whole and in order, with writes
// paced or not, and see the end when the relay closes the fan-out.
func TestIdealFanoutRelaysEveryMessage(t *testing.T) {
	t.Parallel()
	at := time.Now()
	var msgs [][]byte
	for seq := int64(1); seq <= 40; seq += 4 {
		var evs []*debatedv1.LedgerEvent
		for s := seq; s < seq+4; s++ {
			evs = append(evs, &debatedv1.LedgerEvent{Seq: s, Time: timestamppb.New(at), PayloadJson: strings.Repeat("x", 300)})
		}
		b, err := proto.Marshal(&debatedv1.WatchDebateResponse{Events: evs})
		require.NoError(t, err)
		msgs = append(msgs, b)
	}
	for _, pace := range []time.Duration{0, 5 * time.Millisecond} {
		ctx := t.Context()
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		f := newFanout()
		var ws []*watcher
		var wg sync.WaitGroup
		ready := make(chan error, 3)
		for range 3 {
			sender, receiver, err := tcpPair(ctx, ln)
			require.NoError(t, err)
			w := &watcher{gate: 4}
			ws = append(ws, w)
			wg.Go(func() { assert.NoError(t, f.write(sender, pace)) })
			wg.Go(func() { w.runTCP(receiver, ready) })
		}
		for _, m := range msgs {
			f.forward(m)
		}
		f.close()
		wg.Wait()
		require.NoError(t, ln.Close())
		for i, w := range ws {
			require.NoError(t, w.err, "watcher %d, pace %s", i, pace)
			require.Equal(t, int64(40), w.last, "watcher %d, pace %s", i, pace)
			require.Equal(t, int64(len(msgs)), w.msgs)
			require.Len(t, w.lat, 36, "the events after the gate")
			require.NoError(t, <-ready)
		}
	}
}

// TestConnectWatcherReadsEnvelopes: a Connect watcher sends the request as
// one binary envelope with the Connect headers, reads each message
// envelope's events in order, ends cleanly at an empty end-of-stream
// envelope, and reports the error of one that carries it.
func TestConnectWatcherReadsEnvelopes(t *testing.T) {
	t.Parallel()
	at := time.Now()
	envelope := func(flags byte, b []byte) []byte {
		return append(binary.BigEndian.AppendUint32([]byte{flags}, uint32(len(b))), b...)
	}
	message := func(seqs ...int64) []byte {
		var evs []*debatedv1.LedgerEvent
		for _, s := range seqs {
			evs = append(evs, &debatedv1.LedgerEvent{Seq: s, Time: timestamppb.New(at)})
		}
		b, err := proto.Marshal(&debatedv1.WatchDebateResponse{Events: evs})
		require.NoError(t, err)
		return b
	}
	for _, tc := range []struct {
		name, end, err string
	}{
		{name: "clean end", end: `{}`},
		{name: "an error at the end", end: `{"error":{"code":"unavailable","message":"server shutting down"}}`, err: "connect watch: unavailable: server shutting down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				assert.Equal(t, "/debated.v1.DebateService/WatchDebate", r.URL.Path)
				assert.Equal(t, "application/connect+proto", r.Header.Get("Content-Type"))
				assert.Equal(t, "1", r.Header.Get("Connect-Protocol-Version"))
				assert.Equal(t, "Bearer k", r.Header.Get("Authorization"))
				body, _ := io.ReadAll(r.Body)
				var req debatedv1.WatchDebateRequest
				assert.NoError(t, proto.Unmarshal(body[5:], &req))
				assert.Equal(t, "d-1", req.GetDebateId())
				rw.Header().Set("Content-Type", "application/connect+proto")
				_, _ = rw.Write(envelope(0, message(1, 2)))
				_, _ = rw.Write(envelope(0, message(3)))
				_, _ = rw.Write(envelope(2, []byte(tc.end)))
			}))
			t.Cleanup(srv.Close)
			w := &watcher{debate: "d-1", gate: 1}
			ready := make(chan error, 1)
			w.runConnect(t.Context(), connectClient(1), strings.TrimPrefix(srv.URL, "http://"), "k", ready)
			require.NoError(t, <-ready, "ready at the gate")
			require.Equal(t, int64(3), w.last)
			require.Equal(t, int64(2), w.msgs)
			if tc.err == "" {
				require.NoError(t, w.err)
			} else {
				require.EqualError(t, w.err, tc.err)
			}
		})
	}
}
