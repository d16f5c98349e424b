package watchload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// FloorResult is what pushing bytes through loopback TCP cost, without
// gRPC, HTTP/2 or any decoding: the least CPU a run that delivers as many
// bytes over as many connections can take on this machine.
type FloorResult struct {
	Conns int
	// Bytes is how many bytes the receiving ends read.
	Bytes int64
	// Wall is how long it took, CPU this process's CPU time (the sending
	// and the receiving end are both in it).
	Wall, CPU time.Duration
}

// Floor sends total bytes, split evenly, over conns loopback TCP
// connections in writes of writeSize bytes, reads them at the other end in
// 32 KiB reads (gRPC's default read buffer), and measures the wall and
// CPU time it took.
func Floor(ctx context.Context, conns int, total int64, writeSize int) (FloorResult, error) {
	if conns < 1 || total < 1 || writeSize < 1 {
		return FloorResult{}, errors.New("watchload: floor needs connections, bytes and a write size")
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return FloorResult{}, err
	}
	defer func() { _ = ln.Close() }()
	var senders, receivers []net.Conn
	defer func() {
		for _, c := range append(senders, receivers...) {
			_ = c.Close()
		}
	}()
	for range conns {
		s, r, err := tcpPair(ctx, ln)
		if err != nil {
			return FloorResult{}, err
		}
		senders, receivers = append(senders, s), append(receivers, r)
	}
	per := total / int64(conns)
	buf := make([]byte, writeSize)
	errs := make(chan error, 2*conns)
	var wg sync.WaitGroup
	var received atomic.Int64
	cpu0, start := processCPU(), time.Now()
	for i := range conns {
		wg.Add(2)
		go func(c net.Conn) {
			defer wg.Done()
			b := make([]byte, 32<<10)
			for got := int64(0); got < per; {
				n, err := c.Read(b[:min(int64(len(b)), per-got)])
				got += int64(n)
				received.Add(int64(n))
				if err != nil && (got < per || !errors.Is(err, io.EOF)) {
					errs <- err
					return
				}
			}
		}(receivers[i])
		go func(c net.Conn) {
			defer wg.Done()
			for sent := int64(0); sent < per; {
				n, err := c.Write(buf[:min(int64(len(buf)), per-sent)])
				if err != nil {
					errs <- err
					return
				}
				sent += int64(n)
			}
		}(senders[i])
	}
	wg.Wait()
	res := FloorResult{Conns: conns, Bytes: received.Load(), Wall: time.Since(start), CPU: processCPU() - cpu0}
	close(errs)
	if err := <-errs; err != nil {
		return res, fmt.Errorf("watchload: floor: %w", err)
	}
	return res, nil
}

// MedianFloor runs Floor runs times (at least once) and returns the run
// with the median CPU.
func MedianFloor(ctx context.Context, runs, conns int, total int64, writeSize int) (FloorResult, error) {
	var rs []FloorResult
	for range max(1, runs) {
		r, err := Floor(ctx, conns, total, writeSize)
		if err != nil {
			return r, err
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b FloorResult) int { return cmp.Compare(a.CPU, b.CPU) })
	return rs[len(rs)/2], nil
}
