//go:build unix

package server

import (
	"io"
	"net"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/mem"
)

// countingPool counts the buffers taken from it and not yet put back.
type countingPool struct {
	mem.BufferPool
	out atomic.Int64
}

func (p *countingPool) Get(n int) *[]byte { p.out.Add(1); return p.BufferPool.Get(n) }
func (p *countingPool) Put(b *[]byte)     { p.out.Add(-1); p.BufferPool.Put(b) }

// A gRPC connection the split routes must be readable "on ready" (gRPC's
// transport then holds no read buffer while the connection is idle, as on
// a plain TCP connection): the routed prefix first, then the socket, a
// buffer taken only once bytes have arrived, io.EOF when the peer closes.
func TestSplitGRPCConnReadsOnReady(t *testing.T) {
	t.Parallel()
	root, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := newSplitListener(root)
	go s.run()
	t.Cleanup(s.close)

	client, err := net.Dial("tcp", root.Addr().String())
	require.NoError(t, err)
	defer func() { _ = client.Close() }()
	_, err = client.Write([]byte(h2Preface + "abc"))
	require.NoError(t, err)
	c, err := s.grpcL.Accept()
	require.NoError(t, err)
	defer func() { _ = c.Close() }()

	rr, ok := c.(interface {
		ReadOnReady(bufSize int, pool mem.BufferPool) (*[]byte, int, error)
	})
	require.True(t, ok, "the routed connection (%T) has no ReadOnReady: gRPC would pin a 32 KiB reader to it", c)
	pool := &countingPool{BufferPool: mem.DefaultBufferPool()}

	var got []byte
	for len(got) < len(h2Preface)+3 {
		buf, n, err := rr.ReadOnReady(1024, pool)
		require.NoError(t, err)
		got = append(got, (*buf)[:n]...)
		pool.Put(buf)
	}
	require.Equal(t, h2Preface+"abc", string(got))
	require.Zero(t, pool.out.Load())

	type result struct {
		data string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		buf, n, err := rr.ReadOnReady(1024, pool)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{data: string((*buf)[:n])}
		pool.Put(buf)
	}()
	// Waiting for bytes takes no buffer (if the read has not started yet,
	// none is taken either).
	require.Zero(t, pool.out.Load())
	_, err = client.Write([]byte("xyz"))
	require.NoError(t, err)
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, "xyz", r.data)

	require.NoError(t, client.Close())
	_, _, err = rr.ReadOnReady(1024, pool)
	require.ErrorIs(t, err, io.EOF)
	require.Zero(t, pool.out.Load())
}
