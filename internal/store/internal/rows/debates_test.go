package rows

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func TestDebateEventLimit(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]int{-5: 500, 0: 500, 1: 1, 500: 500, 4999: 4999, 5000: 5000, 5001: 5000, 1 << 40: 5000} {
		require.Equal(t, want, DebateEventLimit(in), "DebateEventLimit(%d)", in)
	}
}

func TestNotifyPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, ids := range [][2]string{
		{"tenant-1", "debate-2"},
		{"a/b", "c/d/e"},
		{"100%", "%2F"},
		{"%", "/"},
		{"ü", "日本"},
	} {
		p := NotifyPayload(ids[0], ids[1])
		require.Equal(t, 1, strings.Count(p, "/"), "one separator in %q", p)
		tenant, debateID, ok := ParseNotifyPayload(p)
		require.True(t, ok, p)
		require.Equal(t, ids, [2]string{tenant, debateID})
	}
	require.Equal(t, "tenant-1/debate-2", NotifyPayload("tenant-1", "debate-2"), "plain ids are as they are")
	for _, bad := range []string{"", "x", "/", "a/", "/b", "a/b/c", "a%/b", "a%2/b", "a/b%zz"} {
		_, _, ok := ParseNotifyPayload(bad)
		require.False(t, ok, bad)
	}
}

func FuzzParseNotifyPayload(f *testing.F) {
	f.Add("tenant/debate")
	f.Add("a%2Fb/c%25")
	f.Add("%")
	f.Fuzz(func(t *testing.T, p string) {
		tenant, debateID, ok := ParseNotifyPayload(p)
		if !ok {
			return
		}
		require.NotEmpty(t, tenant)
		require.NotEmpty(t, debateID)
		again, debateAgain, ok := ParseNotifyPayload(NotifyPayload(tenant, debateID))
		require.True(t, ok)
		require.Equal(t, [2]string{tenant, debateID}, [2]string{again, debateAgain})
	})
}

func TestDebateCursorRoundTrip(t *testing.T) {
	t.Parallel()
	d := debate.Debate{ID: "debate/1", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.FixedZone("X", 3600))}
	at, id, ok, err := DecodeDebateCursor(EncodeDebateCursor(d))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "debate/1", id)
	require.Equal(t, Time(d.CreatedAt), at)
	_, _, ok, err = DecodeDebateCursor("")
	require.NoError(t, err)
	require.False(t, ok)
	for _, c := range []string{EncodeCursor("x", "id"), EncodeCursor("2026-01-02T03:04:05.000000Z", ""), EncodeCursor("id")} {
		_, _, _, err := DecodeDebateCursor(c)
		require.ErrorIs(t, err, debate.ErrInvalid, c)
	}
}

func TestNewDebateStamps(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.FixedZone("X", 3600))
	in := debate.Debate{
		ID: "d", TenantID: "other", DealID: "deal", Protocol: "p", Options: json.RawMessage{},
		Status: debate.DebateFailed, LastSeq: 4, CreatedAt: created,
	}
	d, err := NewDebate("t", in)
	require.NoError(t, err)
	require.Equal(t, "t", d.TenantID, "the tenant of the context, not the input's")
	require.Equal(t, debate.DebateQueued, d.Status)
	require.Zero(t, d.LastSeq)
	require.Nil(t, d.Options, "empty options are none")
	require.Equal(t, Time(created), d.CreatedAt)
	require.Equal(t, Time(created), d.UpdatedAt)
	require.Equal(t, "other", in.TenantID, "the caller's value is unchanged")
}

func TestNewStepHead(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := debate.StepCommit{
		DebateID: "d", ExpectSeq: 7, ExpectHash: "h7", Status: debate.DebateRunning, At: at,
		Events: []debate.Event{
			{TenantID: "t", DebateID: "d", Seq: 8, Type: "x", Time: at, PrevHash: "h7", Hash: "h8"},
			{TenantID: "t", DebateID: "d", Seq: 9, Type: "x", Time: at, PrevHash: "h8", Hash: "h9", Payload: json.RawMessage(`[]`)},
		},
	}
	s, err := NewStep("t", c)
	require.NoError(t, err)
	require.Equal(t, int64(9), s.LastSeq)
	require.Equal(t, "h9", s.HeadHash)
	require.Equal(t, []string{`{}`, `[]`}, s.Events.Payloads, "a nil payload is the ledger's {}")

	c.Events = nil
	s, err = NewStep("t", c)
	require.NoError(t, err)
	require.Equal(t, int64(7), s.LastSeq, "without events the head stays")
	require.Equal(t, "h7", s.HeadHash)
	require.Zero(t, s.Events.Len())

	c.Round = 1 << 40
	_, err = NewStep("t", c)
	require.ErrorIs(t, err, debate.ErrInvalid)
}
