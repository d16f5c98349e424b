// Package pgtest gives tests a fresh, empty PostgreSQL database of their own.
// It reads TEST_DATABASE_URL (default: the local trust-auth server). When the
// server cannot be reached the test fails if CI is set and skips otherwise,
// saying why.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is used when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// BaseURL returns the administrative URL tests connect to.
func BaseURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewDatabase creates an empty database with a random name and returns its
// URL; the database is dropped when the test ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := BaseURL()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("PostgreSQL at %s is unreachable and CI is set: %v", base, err)
		}
		tb.Skipf("PostgreSQL at %s is unreachable, skipping (set TEST_DATABASE_URL): %v", base, err)
	}
	defer func() { _ = conn.Close(ctx) }()
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	name := "debated_test_" + hex.EncodeToString(buf)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Logf("drop database %s: %v", name, err)
			return
		}
		defer func() { _ = c.Close(ctx) }()
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Logf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
