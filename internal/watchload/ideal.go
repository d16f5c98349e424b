package watchload

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"time"
)

// The ideal fan-out (Config.Ideal): what the watchers would cost if the
// server's fan-out cost nothing but the kernel's copies. Each debate has
// one real gRPC watcher, the relay; every other watcher of the debate is a
// plain loopback TCP connection in this process. The relay appends each
// message it receives (length-prefixed) to one shared log, once; each
// connection's writer sends whatever the log has gained since its last
// write in a single write, at most once per pace, and the reading end
// checks and times the events as a gRPC watcher does. The bytes,
// connections and checks are a real run's; gRPC, HTTP/2 and the server's
// per-watcher work are gone, and each watcher costs one wake-up and one
// write per pace. If a run's targets fail even so, no server can meet them
// on this machine with these bytes.

// fanout is one debate's log of relayed messages and its TCP watchers.
type fanout struct {
	mu   sync.Mutex
	log  []byte // append-only: a writer's snapshot of it never changes
	done bool
	news chan struct{} // closed (and replaced) when the log grows or ends
}

func newFanout() *fanout { return &fanout{news: make(chan struct{})} }

// forward appends a message to the log and wakes the writers.
func (f *fanout) forward(msg []byte) {
	f.mu.Lock()
	f.log = binary.BigEndian.AppendUint32(f.log, uint32(len(msg)))
	f.log = append(f.log, msg...)
	close(f.news)
	f.news = make(chan struct{})
	f.mu.Unlock()
}

// close ends the log: the writers close their connections once they have
// written all of it.
func (f *fanout) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		f.done = true
		close(f.news)
	}
}

// write is one TCP watcher's writer: it sends conn the log as it grows,
// all that is new in one write, writes at least pace apart.
func (f *fanout) write(conn net.Conn, pace time.Duration) error {
	defer func() { _ = conn.Close() }()
	var sent int
	var last time.Time
	for {
		f.mu.Lock()
		log, done, news := f.log, f.done, f.news
		f.mu.Unlock()
		if sent == len(log) {
			if done {
				return nil
			}
			<-news
			if wait := pace - time.Since(last); wait > 0 {
				time.Sleep(wait)
			}
			continue
		}
		last = time.Now()
		if _, err := conn.Write(log[sent:]); err != nil {
			return err
		}
		sent = len(log)
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(ctx context.Context, ln net.Listener) (sender, receiver net.Conn, err error) {
	var d net.Dialer
	receiver, err = d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	sender, err = ln.Accept()
	if err != nil {
		_ = receiver.Close()
		return nil, nil, err
	}
	return sender, receiver, nil
}

// runTCP is run for a TCP watcher: it reads the relay's messages from conn.
func (w *watcher) runTCP(conn net.Conn, ready chan<- error) {
	defer func() { _ = conn.Close() }()
	f := newFrames(conn, 4)
	var msg []byte
	w.follow(ready, func() (int, error) {
		var err error
		msg, err = f.next() // io.EOF: the relay's stream ended
		return len(msg), err
	}, func(saw func(seq int64, t time.Time) error) error {
		return scanEvents(msg, saw)
	})
}

// frames reads length-prefixed messages into one reused buffer: a header
// of a fixed size whose last 4 bytes are the message's length (big
// endian), then the message.
type frames struct {
	r   *bufio.Reader
	hdr []byte
	buf []byte
}

func newFrames(r io.Reader, hdrLen int) *frames {
	return &frames{r: bufio.NewReaderSize(r, 64<<10), hdr: make([]byte, hdrLen)}
}

// next reads the next message (valid until the next call); io.EOF if the
// stream ends before a header.
func (f *frames) next() ([]byte, error) {
	if _, err := io.ReadFull(f.r, f.hdr); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(f.hdr[len(f.hdr)-4:]))
	if cap(f.buf) < n {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		return nil, err
	}
	return f.buf, nil
}
