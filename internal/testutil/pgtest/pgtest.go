// Package pgtest gives tests a fresh, empty PostgreSQL database of their own.
// It reads TEST_DATABASE_URL (default: the local trust-auth server). When the
// server cannot be reached the test fails if CI is set and skips otherwise,
// saying why.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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

// UnreachableError says the server could not be connected to at all.
type UnreachableError struct{ Err error }

func (e UnreachableError) Error() string { return e.Err.Error() }
func (e UnreachableError) Unwrap() error { return e.Err }

// Unreachable fails tb when CI is set and skips it otherwise, saying why:
// the server at base could not be reached.
func Unreachable(tb testing.TB, base string, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("PostgreSQL at %s is unreachable and CI is set: %v", base, err)
	}
	tb.Skipf("PostgreSQL at %s is unreachable, skipping (set TEST_DATABASE_URL): %v", base, err)
}

// Create creates an empty database with a random name on the server of
// base and returns its URL and a function that drops it. It returns an
// UnreachableError when it cannot connect.
func Create(ctx context.Context, base string) (string, func() error, error) {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, UnreachableError{err}
	}
	defer func() { _ = conn.Close(ctx) }()
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("TEST_DATABASE_URL must be a URL: %w", err)
	}
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	name := "debated_test_" + hex.EncodeToString(buf)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	u.Path = "/" + name
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		defer func() { _ = c.Close(ctx) }()
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	return u.String(), drop, nil
}

// NewDatabase creates an empty database with a random name and returns its
// URL; the database is dropped when the test ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := BaseURL()
	dbURL, drop, err := Create(ctx, base)
	if err != nil {
		if errors.As(err, new(UnreachableError)) {
			Unreachable(tb, base, err)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := drop(); err != nil {
			tb.Log(err)
		}
	})
	return dbURL
}
