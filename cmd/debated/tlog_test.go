package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/tlog"
)

// TestLogServiceEndToEnd runs debates on the real binary and checks the
// tenant's log from outside: the watch stream's last message and GetDebate
// carry a checkpoint signed by the configured key, the debate's head is
// proved in it, the log only grows, and another tenant sees none of it.
func TestLogServiceEndToEnd(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, map[string]string{"DEBATED_LOG_ORIGIN": "debated.e2e"})
			logc := debatedv1.NewLogServiceClient(s.conn)
			d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 1})
			msgs := s.watch(t, s.a, d.GetDebateId(), 0, nil)
			last := msgs[len(msgs)-1]
			cpb := last.GetCheckpoint()
			require.NotNil(t, cpb, "the stream's last message carries the checkpoint")
			for _, m := range msgs[:len(msgs)-1] {
				require.Nil(t, m.GetCheckpoint())
			}
			require.Regexp(t, `^debated\.e2e/tenants/[0-9a-f-]+$`, cpb.GetOrigin())
			cp, err := tlog.Open([]byte(cpb.GetSignedNote()), cpb.GetOrigin(), cpb.GetVerifierKey())
			require.NoError(t, err)
			if kind == "postgres" {
				// The configured key, not one made up by the server.
				secrets, current, err := parseSecrets("k", testCheckpointKeys, "")
				require.NoError(t, err)
				keys, err := tlog.NewKeyring("debated.e2e", secrets, current)
				require.NoError(t, err)
				require.Equal(t, keys.VerifierKey(), cpb.GetVerifierKey())
			}

			inc, err := logc.GetInclusionProof(s.a, &debatedv1.GetInclusionProofRequest{DebateId: d.GetDebateId(), TreeSize: cp.Size})
			require.NoError(t, err)
			require.Equal(t, last.GetEvent().GetSeq(), inc.GetSeq(), "the debate's last logged head is its last event")
			require.Equal(t, last.GetEvent().GetHash(), inc.GetEventHash())
			leafHash, err := tlog.Leaf{Kind: tlog.KindStep, Subject: d.GetDebateId(), Seq: inc.GetSeq(), Hash: inc.GetEventHash()}.LeafHash()
			require.NoError(t, err)
			require.NoError(t, tlog.VerifyInclusion(inc.GetLeafIndex(), cp.Size, leafHash, inc.GetHashes(), cp.Root))

			got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: d.GetDebateId()})
			require.NoError(t, err)
			require.GreaterOrEqual(t, got.GetCheckpoint().GetTreeSize(), cp.Size)

			// A second debate: the log grows, consistently.
			s.watch(t, s.a, s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 1}).GetDebateId(), 0, nil)
			latest, err := logc.GetCheckpoint(s.a, &debatedv1.GetCheckpointRequest{})
			require.NoError(t, err)
			require.Greater(t, latest.GetCheckpoint().GetTreeSize(), cp.Size)
			cons, err := logc.GetConsistencyProof(s.a, &debatedv1.GetConsistencyProofRequest{FromSize: cp.Size})
			require.NoError(t, err)
			require.NoError(t, tlog.VerifyConsistency(cp.Size, cons.GetToSize(), cons.GetHashes(), cp.Root, cons.GetCheckpoint().GetRootHash()))
			again, err := logc.GetCheckpoint(s.a, &debatedv1.GetCheckpointRequest{TreeSize: cp.Size})
			require.NoError(t, err)
			require.Equal(t, cpb.GetSignedNote(), again.GetCheckpoint().GetSignedNote(), "an earlier size signs to the same checkpoint")

			// Bad input and another tenant.
			_, err = logc.GetConsistencyProof(s.a, &debatedv1.GetConsistencyProofRequest{FromSize: cp.Size + 1000})
			require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			_, err = logc.GetCheckpoint(s.a, &debatedv1.GetCheckpointRequest{TreeSize: cp.Size + 1000})
			require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
			_, err = logc.GetInclusionProof(s.a, &debatedv1.GetInclusionProofRequest{})
			require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			_, err = logc.GetInclusionProof(s.b, &debatedv1.GetInclusionProofRequest{DebateId: d.GetDebateId()})
			require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
			other, err := logc.GetCheckpoint(s.b, &debatedv1.GetCheckpointRequest{})
			require.NoError(t, err)
			require.Zero(t, other.GetCheckpoint().GetTreeSize(), "tenant b's log holds none of tenant a's steps")
			require.NotEqual(t, cpb.GetOrigin(), other.GetCheckpoint().GetOrigin())
		})
	}
}

// TestCheckpointKeysRequiredWithPostgres: replicas must share the key that
// signs checkpoints, so PostgreSQL without DEBATED_CHECKPOINT_KEYS does not
// start; a malformed key is refused.
func TestCheckpointKeysRequiredWithPostgres(t *testing.T) {
	t.Parallel()
	url := migratedDatabase(t)
	for name, c := range map[string]struct {
		keys, want string
	}{
		"missing": {"", "DEBATED_CHECKPOINT_KEYS is required with PostgreSQL"},
		"short":   {"v1:c2hvcnQ=", "invalid checkpoint keyring"},
		"garbage": {"v1", "not VERSION:BASE64"},
	} {
		env := map[string]string{"DEBATED_DATABASE_URL": url, "DEBATED_MIGRATE_ON_START": "false",
			"DEBATED_SIGNING_KEYS": testSigningKeys, "DEBATED_CHECKPOINT_KEYS": c.keys, "DEBATED_LOG_LEVEL": "error"}
		var out bytes.Buffer
		err := run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, &out, &out, nil)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), c.want, name)
	}
}

// TestWitnessDirReceivesCheckpoints: with DEBATED_WITNESS_DIR the
// background integration writes each tenant's new checkpoints to the
// folder, signed, without any client asking for one.
func TestWitnessDirReceivesCheckpoints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startStack(t, "sqlite", map[string]string{"DEBATED_WITNESS_DIR": dir, "DEBATED_LOG_INTEGRATE_INTERVAL": "20ms"})
	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 1})
	msgs := s.watch(t, s.a, d.GetDebateId(), 0, nil)
	cpb := msgs[len(msgs)-1].GetCheckpoint()
	require.NotNil(t, cpb)
	tenant := cpb.GetOrigin()[strings.LastIndex(cpb.GetOrigin(), "/")+1:]
	want := filepath.Join(dir, tenant, fmt.Sprintf("%020d.checkpoint", cpb.GetTreeSize()))
	require.Eventually(t, func() bool {
		_, err := os.Stat(want)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the checkpoint of the debate's last step reaches the witness folder")
	signed, err := os.ReadFile(want)
	require.NoError(t, err)
	cp, err := tlog.Open(signed, cpb.GetOrigin(), cpb.GetVerifierKey())
	require.NoError(t, err)
	require.Equal(t, cpb.GetRootHash(), cp.Root)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the tenant with steps has checkpoints")
}
