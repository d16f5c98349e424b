//go:build unix

package server

import (
	"errors"
	"io"
	"net"
	"syscall"

	"google.golang.org/grpc/mem"
)

// readyPrefixConn is a prefixConn over a TCP or Unix socket that gRPC's
// transport reads without holding a buffer while the connection is idle.
//
// gRPC reads a *net.TCPConn "on ready": it takes a buffer from its pool
// only when the socket has bytes, and gives it back when they are framed.
// Any other net.Conn, such as the prefixConn the split hands it, gets a
// 32 KiB bufio.Reader of its own for the connection's life: with two
// thousand watchers, each on a connection of its own and idle between
// messages, that was 64 MiB of live heap, multiplied by the collector's
// target (cmd/debated: five times the live heap) into hundreds of MiB of
// RSS (docs/benchmarks.md, "Watchers at dashboard scale"). gRPC looks for
// the method ReadOnReady (its transport's readyreader.Reader interface);
// this one replays the routed prefix first, then reads the socket as
// gRPC's own reader does.
type readyPrefixConn struct {
	*prefixConn
	raw syscall.RawConn
}

// readyConn returns c as a readyPrefixConn when it wraps a TCP or Unix
// socket, and c itself otherwise (TLS, in-memory connections).
func readyConn(c *prefixConn) net.Conn {
	switch c.Conn.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return c
	}
	raw, err := c.Conn.(syscall.Conn).SyscallConn()
	if err != nil {
		return c
	}
	return &readyPrefixConn{prefixConn: c, raw: raw}
}

// ReadOnReady waits until the socket is readable, then reads up to bufSize
// bytes into a buffer from pool and returns it with the count; the caller
// puts the buffer back. The routed prefix comes first. A closed peer is
// io.EOF. The connection's read deadline applies to the wait.
func (c *readyPrefixConn) ReadOnReady(bufSize int, pool mem.BufferPool) (*[]byte, int, error) {
	if len(c.prefix) > 0 {
		buf := pool.Get(bufSize)
		n := copy(*buf, c.prefix)
		c.prefix = c.prefix[n:]
		return buf, n, nil
	}
	var (
		buf     *[]byte
		n       int
		readErr error
	)
	err := c.raw.Read(func(fd uintptr) bool {
		buf = pool.Get(bufSize)
		n, readErr = syscall.Read(int(fd), *buf)
		if readErr != nil {
			pool.Put(buf)
			buf = nil
		}
		return !errors.Is(readErr, syscall.EAGAIN) && !errors.Is(readErr, syscall.EWOULDBLOCK)
	})
	switch {
	case err != nil:
		if buf != nil {
			pool.Put(buf)
		}
		return nil, 0, err
	case readErr != nil:
		return nil, 0, readErr
	case n == 0:
		pool.Put(buf)
		return nil, 0, io.EOF
	}
	return buf, n, nil
}
