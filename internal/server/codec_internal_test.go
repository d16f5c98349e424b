package server

import (
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// A message between 32 KiB and 1 MiB (a watcher's batch of its own) is
// encoded into a buffer of its size, not one of gRPC's pooled 1 MiB
// buffers; smaller and larger ones encode as with gRPC's codec.
func TestUTF8CodecMarshalSizesBuffers(t *testing.T) {
	t.Parallel()
	c := newUTF8Codec()
	for _, size := range []int{100, 8 << 10, 40 << 10, 200 << 10, 2 << 20} {
		msg := &debatedv1.WatchDebateResponse{Events: []*debatedv1.LedgerEvent{{DebateId: "d1", Seq: 7, PayloadJson: strings.Repeat("x", size)}}}
		want, err := proto.Marshal(msg)
		require.NoError(t, err)
		data, err := c.Marshal(msg)
		require.NoError(t, err)
		got := data.Materialize()
		require.Equal(t, want, got, "size %d", size)
		if len(want) > maxPooledMarshal {
			require.Len(t, data, 1)
			require.LessOrEqual(t, cap(data[0].ReadOnlyData()), len(want)+len(want)/8,
				"a %d-byte message is held in a buffer of %d bytes", len(want), cap(data[0].ReadOnlyData()))
		}
		data.Free()

		var back debatedv1.WatchDebateResponse
		require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(want)}, &back))
		require.True(t, proto.Equal(msg, &back))
	}
}
