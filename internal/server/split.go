package server

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"time"
)

// h2Preface opens every HTTP/2 connection made with prior knowledge (h2c):
// native gRPC clients send it; browsers on plaintext HTTP never do.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// prefaceTimeout bounds how long a new connection may take to send the
// bytes that tell which side serves it.
const prefaceTimeout = 10 * time.Second

// splitListener divides one listener's connections by their first bytes:
// the HTTP/2 preface goes to grpcL (served by grpc.Server.Serve, the same
// transport as before, so native gRPC pays nothing per call), anything else
// to httpL (an http.Server: HTTP/1.1 for browsers, Connect, gRPC-Web,
// REST). The split costs one peek per connection, not per call.
type splitListener struct {
	root  net.Listener
	grpcL *chanListener
	httpL *chanListener
	once  sync.Once
}

func newSplitListener(root net.Listener) *splitListener {
	s := &splitListener{root: root}
	s.grpcL = &chanListener{addr: root.Addr(), conns: make(chan net.Conn), done: make(chan struct{})}
	s.httpL = &chanListener{addr: root.Addr(), conns: make(chan net.Conn), done: make(chan struct{})}
	return s
}

// close stops accepting on the root listener and ends both sides.
func (s *splitListener) close() { s.once.Do(func() { _ = s.root.Close() }) }

// run accepts until the root listener is closed.
func (s *splitListener) run() {
	var backoff time.Duration
	for {
		c, err := s.root.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				s.grpcL.shut()
				s.httpL.shut()
				return
			}
			// Temporary failures (too many open files): back off as
			// net/http does, instead of spinning.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		go s.route(c)
	}
}

// route reads as many bytes as it takes to tell an HTTP/2 preface from
// anything else, then hands the connection, with those bytes put back, to
// the side that serves it.
func (s *splitListener) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(prefaceTimeout))
	buf := make([]byte, 0, len(h2Preface))
	isH2 := true
	for len(buf) < len(h2Preface) {
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if !bytes.HasPrefix([]byte(h2Preface), buf) {
			isH2 = false
			break
		}
		if err != nil {
			_ = c.Close()
			return
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	var pc net.Conn = &prefixConn{Conn: c, prefix: buf}
	l := s.httpL
	if isH2 {
		l = s.grpcL
		pc = readyConn(pc.(*prefixConn))
	}
	select {
	case l.conns <- pc:
	case <-l.done:
		_ = c.Close()
	}
}

// chanListener is a net.Listener fed by splitListener.
type chanListener struct {
	addr     net.Addr
	conns    chan net.Conn
	done     chan struct{}
	shutOnce sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) shut() { l.shutOnce.Do(func() { close(l.done) }) }

// Close ends Accept; the root listener stays open for the other side
// until splitListener.close.
func (l *chanListener) Close() error {
	l.shut()
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// prefixConn replays the bytes read to route a connection before reading
// on from the connection itself.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
