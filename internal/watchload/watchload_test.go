package watchload

import (
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
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
