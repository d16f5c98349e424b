package main

import (
	"context"
	"net/url"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/redact"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/secretbox"
	"github.com/debated/debated/internal/server"
	"github.com/jackc/pgx/v5/pgconn"
)

// configuredSecrets returns the Redactor that masks every secret the
// process was configured with (the deployment's model key, the admin token,
// the encryption, signing and checkpoint secrets, the database password) in logs and in
// the error texts sealed into ledgers. serve adds every tenant's model key
// at start-up (learnTenantKeys) and each model backend adds its own key when
// it is built; credential shapes are masked whatever the Redactor knows
// (see package redact).
func configuredSecrets(cfg config) *redact.Redactor {
	r := redact.New(cfg.llmAPIKey, cfg.server.AdminToken, cfg.encryptionKey)
	for _, part := range append(splitList(cfg.signingKeys), splitList(cfg.tlog.keys)...) {
		if _, b64, ok := strings.Cut(part, ":"); ok {
			r.Add(b64)
		}
	}
	if cfg.databaseURL != "" {
		// A URL or a key=value connection string; pgconn reads both (and
		// PGPASSWORD) as the store will. A URL it refuses may still carry
		// a password.
		if pc, err := pgconn.ParseConfig(cfg.databaseURL); err == nil {
			r.Add(pc.Password)
		} else if u, err := url.Parse(cfg.databaseURL); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				r.Add(pw)
			}
		}
	}
	return r
}

// eachTenant calls fn with every tenant, a page at a time; the error is
// the listing's.
func eachTenant(ctx context.Context, st debate.TenantStore, fn func(debate.Tenant)) error {
	for after := ""; ; {
		page, next, err := st.TenantList(ctx, debate.Page{After: after, Limit: 500})
		if err != nil {
			return err
		}
		for _, t := range page {
			fn(t)
		}
		if next == "" || len(page) == 0 {
			return nil
		}
		after = next
	}
}

// learnTenantKeys adds every tenant's sealed model key to r, so that an
// endpoint two tenants share cannot echo one tenant's key into the other's
// logs or ledger even before the key's own debates have run on this
// replica. Keys set later on another replica are learnt when this replica
// first uses them (and credential shapes are masked meanwhile). It returns
// how many keys it learnt; a tenant whose key does not open is skipped.
func learnTenantKeys(ctx context.Context, st stores, box *secretbox.Box, r *redact.Redactor) (int, error) {
	if box == nil {
		return 0, nil
	}
	n := 0
	err := eachTenant(ctx, st, func(t debate.Tenant) {
		m, err := st.TenantModelGet(runner.TenantContext(ctx, t.ID), t.ID)
		if err != nil || len(m.APIKeyCiphertext) == 0 {
			return
		}
		if pt, err := box.Open(m.APIKeyCiphertext, server.TenantModelContext(t.ID)); err == nil {
			r.Add(string(pt))
			n++
		}
	})
	return n, err
}
