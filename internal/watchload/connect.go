package watchload

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"google.golang.org/protobuf/proto"
)

// connectClient returns the HTTP client of Config.Connect's watchers: plain
// HTTP/1.1, as a browser's Connect client speaks to the server without TLS,
// where each open stream holds a connection of its own.
func connectClient(watchers int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: watchers, DisableCompression: true}}
}

// runConnect is runLean over the Connect protocol (server streaming,
// binary): what the dashboard does. It reads each envelope's message as
// bytes and scans it; the end-of-stream envelope ends the watch, with its
// error if it carries one.
func (w *watcher) runConnect(ctx context.Context, client *http.Client, addr, apiKey string, ready chan<- error) {
	reqMsg, err := proto.Marshal(&debatedv1.WatchDebateRequest{DebateId: w.debate})
	if err != nil {
		ready <- err
		return
	}
	body := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(reqMsg))) //nolint:gosec // a request of a few bytes
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/"+debatedv1.DebateService_ServiceDesc.ServiceName+"/WatchDebate",
		bytes.NewReader(append(body, reqMsg...)))
	if err != nil {
		ready <- err
		return
	}
	req.Header.Set("Content-Type", "application/connect+proto")
	req.Header.Set("Connect-Protocol-Version", "1")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := client.Do(req)
	if err != nil {
		ready <- err
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		ready <- fmt.Errorf("connect watch: HTTP %d: %s", resp.StatusCode, b)
		return
	}
	f := newFrames(resp.Body, 5) // flags, then the length
	var msg []byte
	w.follow(ready, func() (int, error) {
		var err error
		switch msg, err = f.next(); {
		case errors.Is(err, io.EOF):
			return 0, io.ErrUnexpectedEOF // a Connect stream ends with its end-of-stream message
		case err != nil:
			return 0, err
		case f.hdr[0]&0x02 != 0:
			return 0, endOfStream(msg)
		case f.hdr[0]&0x01 != 0:
			return 0, errors.New("connect watch: a compressed message, which was not asked for")
		}
		return len(msg), nil
	}, func(saw func(seq int64, t time.Time) error) error {
		return scanEvents(msg, saw)
	})
}

// endOfStream reads a Connect end-of-stream message: io.EOF for a clean
// end, the error it carries otherwise.
func endOfStream(b []byte) error {
	var end struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &end); err != nil {
		return fmt.Errorf("connect watch: end of stream: %w", err)
	}
	if end.Error != nil {
		return fmt.Errorf("connect watch: %s: %s", end.Error.Code, end.Error.Message)
	}
	return io.EOF
}
