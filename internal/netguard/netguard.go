// Package netguard keeps the service's outgoing connections to endpoints a
// tenant names (its model's base URL) off the addresses of the host and its
// network: loopback, private (RFC 1918, unique local), link-local (where the
// clouds' metadata services answer, 169.254.169.254 and fd00:ec2::254),
// carrier-grade NAT, unspecified, multicast and broadcast addresses.
//
// A URL is checked when it is set (CheckURL) and again at every connection
// (Dialer's Control sees the address actually dialled), because what a name
// resolves to can change between the two (DNS rebinding).
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrBlocked is wrapped by every refusal of an address.
var ErrBlocked = errors.New("address not allowed")

// blockedPrefixes are the ranges Blocked refuses beyond what netip's
// predicates name.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),         // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),     // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),      // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),      // NAT64: may embed any IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64
	netip.MustParsePrefix("2002::/16"),         // 6to4: may embed any IPv4
	netip.MustParsePrefix("fec0::/10"),         // deprecated site-local
	netip.MustParsePrefix("fd00:ec2::254/128"), // AWS metadata over IPv6 (also unique local)
}

// Blocked reports whether ip is an address of the host or its network
// rather than of the internet.
func Blocked(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Resolver resolves host names; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL refuses raw unless it is an http or https URL whose host is, or
// resolves only to, addresses Blocked does not refuse. It returns an error
// wrapping ErrBlocked for a refused address, and another error when the
// URL is malformed or its host does not resolve.
func CheckURL(ctx context.Context, r Resolver, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return errors.New("must be an http or https URL")
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if Blocked(ip) {
			return fmt.Errorf("%s is a loopback, private, link-local or metadata address: %w", ip, ErrBlocked)
		}
		return nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("host %q does not resolve", host)
	}
	for _, ip := range ips {
		if Blocked(ip) {
			return fmt.Errorf("host %q resolves to %s, a loopback, private, link-local or metadata address: %w", host, ip.Unmap(), ErrBlocked)
		}
	}
	return nil
}

// Control is a net.Dialer Control function that refuses to connect to an
// address Blocked refuses: the check of the address actually dialled.
func Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: dialling %q: %w", address, ErrBlocked)
	}
	if Blocked(ap.Addr()) {
		return fmt.Errorf("netguard: %s is a loopback, private, link-local or metadata address: %w", ap.Addr().Unmap(), ErrBlocked)
	}
	return nil
}

// HTTPClient returns an HTTP client whose every connection goes through
// Control, and through no proxy (a proxy would be what is dialled). Its
// settings are those of http.DefaultTransport otherwise.
func HTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: Control}
	t.DialContext = d.DialContext
	return &http.Client{Transport: t}
}
