package orchestrator

import (
	"testing"
	"time"
)

// TestWorkersNeverWait: a call never waits for a busy worker (it gets a
// goroutine of its own), and an idle worker takes the next call.
func TestWorkersNeverWait(t *testing.T) {
	w := workers{jobs: make(chan func())}
	release, started := make(chan struct{}), make(chan struct{})
	w.run(func() { close(started); <-release })
	<-started
	done := make(chan struct{})
	w.run(func() { close(done) }) // the first worker is busy
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a call waited for a busy worker")
	}
	close(release)
	for i := range 3 {
		done := make(chan int)
		w.run(func() { done <- i })
		if got := <-done; got != i {
			t.Fatalf("call %d ran as %d", i, got)
		}
	}
}
