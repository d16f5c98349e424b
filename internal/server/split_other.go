//go:build !unix

package server

import "net"

// readyConn returns c: reading a socket on ready is implemented for Unix
// systems only (split_unix.go).
func readyConn(c *prefixConn) net.Conn { return c }
