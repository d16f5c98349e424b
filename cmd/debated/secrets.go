package main

import (
	"log/slog"
	"net/url"
	"strings"

	"github.com/debated/debated/internal/redact"
)

// configuredSecrets returns the Redactor that masks every secret the
// process was configured with (the deployment's model key, the admin token,
// the encryption and signing secrets, the database password) in logs and in
// the error texts sealed into ledgers. Each model backend adds its own key
// to it when it is built, so a tenant's key is masked everywhere in this
// process once its debates have run here; credential shapes are masked even
// before (see package redact).
func configuredSecrets(cfg config) *redact.Redactor {
	r := redact.New(cfg.llmAPIKey, cfg.adminToken, cfg.encryptionKey)
	for _, part := range strings.Split(cfg.signingKeys, ",") {
		if _, b64, ok := strings.Cut(strings.TrimSpace(part), ":"); ok {
			r.Add(b64)
		}
	}
	if u, err := url.Parse(cfg.databaseURL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			r.Add(pw)
		}
	}
	return r
}

// redactingLogger wraps log so that no configured secret or credential
// shape reaches the log output, whoever logged it.
func redactingLogger(log *slog.Logger, r *redact.Redactor) *slog.Logger {
	return slog.New(redact.NewHandler(log.Handler(), r))
}
