package netguard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/debated/debated/internal/netguard"
	"github.com/stretchr/testify/require"
)

func TestBlocked(t *testing.T) {
	t.Parallel()
	blocked := []string{"127.0.0.1", "127.9.9.9", "::1", "10.0.0.1", "172.16.5.4", "192.168.1.1",
		"169.254.169.254", "fe80::1", "fd00:ec2::254", "fc00::1", "0.0.0.0", "::", "100.64.0.1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "224.0.0.1", "255.255.255.255", "64:ff9b::a9fe:a9fe"}
	allowed := []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "172.32.0.1", "100.128.0.1"}
	for _, s := range blocked {
		require.True(t, netguard.Blocked(netip.MustParseAddr(s)), s)
	}
	for _, s := range allowed {
		require.False(t, netguard.Blocked(netip.MustParseAddr(s)), s)
	}
}

// fakeResolver answers every name with its addresses.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ips, ok := f[host]; ok {
		return ips, nil
	}
	return nil, errors.New("no such host")
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	r := fakeResolver{
		"api.example.com":   {netip.MustParseAddr("93.184.216.34")},
		"rebind.example":    {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("169.254.169.254")},
		"internal.example":  {netip.MustParseAddr("10.0.0.7")},
		"localhost.example": {netip.MustParseAddr("::1")},
	}
	ctx := context.Background()
	require.NoError(t, netguard.CheckURL(ctx, r, "https://api.example.com/v1"))
	require.NoError(t, netguard.CheckURL(ctx, r, "http://8.8.8.8:8000/v1"))
	for _, u := range []string{"http://169.254.169.254/", "http://[::1]:80/", "http://rebind.example/",
		"http://internal.example/v1", "http://localhost.example/", "http://[::ffff:10.0.0.1]/"} {
		require.ErrorIs(t, netguard.CheckURL(ctx, r, u), netguard.ErrBlocked, u)
	}
	for _, u := range []string{"ftp://api.example.com/", "not a url", "http:///v1", "http://nowhere.example/"} {
		err := netguard.CheckURL(ctx, r, u)
		require.Error(t, err, u)
		require.NotErrorIs(t, err, netguard.ErrBlocked, u)
	}
}

// TestHTTPClientRefusesAtDial: the client refuses the address it dials,
// whatever name led there.
func TestHTTPClientRefusesAtDial(t *testing.T) {
	t.Parallel()
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls++ }))
	t.Cleanup(srv.Close)
	resp, err := netguard.HTTPClient().Get(srv.URL)
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.ErrorIs(t, err, netguard.ErrBlocked)
	require.Zero(t, calls)
	resp, err = http.Get(srv.URL) //nolint:noctx // the control: an unguarded client reaches it
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 1, calls)
}
