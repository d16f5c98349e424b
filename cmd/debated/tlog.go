package main

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/tlog"
)

// logConfig configures the tenants' transparency logs.
type logConfig struct {
	keys, current string
	origin        string
	interval      time.Duration
	witnessDir    string
}

// defaultLogOrigin names the deployment in checkpoints unless
// DEBATED_LOG_ORIGIN does: set it to the service's public host name.
const defaultLogOrigin = "debated.local"

// logFlags registers the transparency log's flags.
func logFlags(f *envFlags, c *logConfig) {
	str := func(p *string, name, envName, def, usage string) {
		envVar(f, f.fs.StringVar, parseString, p, name, envName, def, usage)
	}
	f.secret(&c.keys, "checkpoint-keys", "DEBATED_CHECKPOINT_KEYS", "checkpoint signing secrets VERSION:BASE64[,...]; required with PostgreSQL")
	str(&c.current, "checkpoint-key-current", "DEBATED_CHECKPOINT_KEY_CURRENT", "", "the checkpoint key version that signs; default the last")
	str(&c.origin, "log-origin", "DEBATED_LOG_ORIGIN", defaultLogOrigin, "the deployment's name in checkpoint origins and the checkpoint key's name")
	envVar(f, f.fs.DurationVar, time.ParseDuration, &c.interval, "log-integrate-interval", "DEBATED_LOG_INTEGRATE_INTERVAL", "1s",
		"how often committed steps are integrated into the logs in the background")
	str(&c.witnessDir, "witness-dir", "DEBATED_WITNESS_DIR", "", "a folder that receives every new checkpoint, DIR/<tenant>/<size>.checkpoint")
}

// parseSecrets reads "v1:BASE64,v2:BASE64" (the last version is current
// unless current names another).
func parseSecrets(name, spec, current string) (map[string][]byte, string, error) {
	secrets := map[string][]byte{}
	var last string
	for _, part := range splitList(spec) {
		version, b64, ok := strings.Cut(part, ":")
		if !ok {
			return nil, "", fmt.Errorf("%s: an entry is not VERSION:BASE64", name)
		}
		secret, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, "", fmt.Errorf("%s: version %s: %w", name, version, err)
		}
		secrets[version], last = secret, version
	}
	if last == "" {
		return nil, "", fmt.Errorf("%s is empty", name)
	}
	return secrets, cmp.Or(current, last), nil
}

// checkpointKeyring returns the checkpoint keyring: from
// DEBATED_CHECKPOINT_KEYS, or on the embedded store from a secret made in
// the data folder on first use. With PostgreSQL the keys are required, so
// that every replica signs the same checkpoints. They are never stored in
// the database.
func checkpointKeyring(cfg config) (*tlog.Keyring, error) {
	secrets, current, err := keyringSecrets(cfg, "DEBATED_CHECKPOINT_KEYS", cfg.tlog.keys, cfg.tlog.current, "checkpoint.key")
	if err != nil {
		return nil, err
	}
	return tlog.NewKeyring(cfg.tlog.origin, secrets, current)
}

// keyringSecrets returns the secrets of a keyring and its current version
// (see parseSecrets): spec, read from the variable envName, or on the
// embedded store a secret kept in the data folder's file, made on first
// use. With PostgreSQL spec is required, so that every replica signs with
// the same keys; they are never stored in the database.
func keyringSecrets(cfg config, envName, spec, current, file string) (map[string][]byte, string, error) {
	switch {
	case spec != "":
	case cfg.databaseURL == "":
		var err error
		if spec, err = dataDirSecret(cfg.dataDir, file, "v1:"); err != nil {
			return nil, "", err
		}
	default:
		return nil, "", fmt.Errorf("%s is required with PostgreSQL: every replica must sign with the same keys", envName)
	}
	return parseSecrets(envName, spec, current)
}

// logStore is what the transparency log needs of a store.
type logStore interface {
	server.LogStore
	LogIntegrateDirty(ctx context.Context) (map[string]tlog.Head, error)
}

// newLog returns the transparency log's server side and the component
// that integrates it until its context ends: at start every tenant's log
// (leaves queued before a crash), then every interval the tenants this
// replica committed steps for. New checkpoints go to the witness folder
// when one is configured.
func newLog(ctx context.Context, cfg config, st stores, log *slog.Logger) (*server.Log, func(context.Context) error, error) {
	keys, err := checkpointKeyring(cfg)
	if err != nil {
		return nil, nil, err
	}
	l := &server.Log{Store: st, Keys: keys, Origin: cfg.tlog.origin}
	// The key's name and hash only: the log's secret filter masks anything
	// shaped like a token, a public key included (debatectl keys prints it).
	name, rest, _ := strings.Cut(keys.VerifierKey(), "+") // NAME+HASH+KEY
	hash, _, _ := strings.Cut(rest, "+")
	log.InfoContext(ctx, "transparency log", slog.String("origin", cfg.tlog.origin), slog.String("checkpoint_key_id", name+"+"+hash))
	w := &logWitness{dir: cfg.tlog.witnessDir, keys: keys, origin: cfg.tlog.origin, log: log}
	return l, func(ctx context.Context) error {
		integrateAll(ctx, st, w, log)
		t := time.NewTicker(max(cfg.tlog.interval, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			heads, err := st.LogIntegrateDirty(ctx)
			if err != nil && ctx.Err() == nil {
				log.WarnContext(ctx, "integrating transparency logs", slog.String("error", err.Error()))
			}
			for tenant, head := range heads {
				w.push(tenant, head)
			}
		}
	}, nil
}

// integrateAll integrates every tenant's log once.
func integrateAll(ctx context.Context, st stores, w *logWitness, log *slog.Logger) {
	err := eachTenant(ctx, st, func(t debate.Tenant) {
		head, err := st.LogIntegrate(debate.WithPrincipal(ctx, debate.Principal{TenantID: t.ID}))
		if err != nil {
			log.WarnContext(ctx, "integrating a transparency log", slog.String("tenant_id", t.ID), slog.String("error", err.Error()))
			return
		}
		w.push(t.ID, head)
	})
	if err != nil && ctx.Err() == nil {
		log.WarnContext(ctx, "listing tenants to integrate their logs", slog.String("error", err.Error()))
	}
}

// logWitness writes each new checkpoint of a tenant to
// dir/<tenant>/<size>.checkpoint, a copy kept outside the database (a
// mounted volume, a synced bucket).
type logWitness struct {
	dir    string
	keys   *tlog.Keyring
	origin string
	log    *slog.Logger
	last   map[string]uint64
}

func (w *logWitness) push(tenant string, head tlog.Head) {
	if w.dir == "" || head.Size == 0 {
		return
	}
	if w.last == nil {
		w.last = map[string]uint64{}
	}
	if w.last[tenant] == head.Size {
		return
	}
	signed, err := w.keys.Sign(tlog.Checkpoint{Origin: tlog.TenantOrigin(w.origin, tenant), Size: head.Size, Root: head.Root})
	if err == nil {
		err = writeCheckpoint(filepath.Join(w.dir, tenant), head.Size, signed)
	}
	if err != nil {
		w.log.Warn("pushing a checkpoint to the witness folder", slog.String("tenant_id", tenant), slog.String("error", err.Error()))
		return
	}
	w.last[tenant] = head.Size
}

// writeCheckpoint writes a signed checkpoint as dir/<size>.checkpoint,
// atomically (a reader never sees half a file).
func writeCheckpoint(dir string, size uint64, signed []byte) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	name := filepath.Join(dir, fmt.Sprintf("%020d.checkpoint", size))
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, signed, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
