package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// stack is a running debated with two tenants, each with a key and the
// sample deal imported.
type stack struct {
	conn   *grpc.ClientConn
	stop   func() error
	a, b   context.Context
	debate debatedv1.DebateServiceClient
	dbURL  string // PostgreSQL only
}

// startStack runs the real binary's entry point on a fresh store of kind.
func startStack(t *testing.T, kind string, extra map[string]string) *stack {
	t.Helper()
	env := map[string]string{"DEBATED_ADMIN_TOKEN": "e2e-admin", "DEBATED_LOG_LEVEL": "warn"}
	args := []string{"serve", "--listen", "127.0.0.1:0"}
	switch kind {
	case "sqlite":
		args = append(args, "--data-dir", t.TempDir())
	case "postgres":
		env["DEBATED_DATABASE_URL"] = pgtest.NewDatabase(t)
		env["DEBATED_SIGNING_KEYS"] = testSigningKeys
		env["DEBATED_CHECKPOINT_KEYS"] = testCheckpointKeys
	}
	dbURL := env["DEBATED_DATABASE_URL"]
	for k, v := range extra {
		env[k] = v
	}
	conn, stop, _ := start(t, args, env)
	s := &stack{conn: conn, stop: stop, debate: debatedv1.NewDebateServiceClient(conn), dbURL: dbURL}
	s.a = s.login(t, "a")
	s.b = s.login(t, "b")
	return s
}

func (s *stack) login(t *testing.T, name string) context.Context {
	t.Helper()
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer e2e-admin")
	admin := debatedv1.NewAdminServiceClient(s.conn)
	tr, err := admin.CreateTenant(actx, &debatedv1.CreateTenantRequest{Name: name})
	require.NoError(t, err)
	kr, err := admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId()})
	require.NoError(t, err)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+kr.GetSecret())
	req, err := apiconv.BundleToProto(storetest.SampleBundle("deal-" + name))
	require.NoError(t, err)
	_, err = debatedv1.NewRegistryServiceClient(s.conn).ImportDeal(ctx, req)
	require.NoError(t, err)
	return ctx
}

func (s *stack) create(t *testing.T, ctx context.Context, deal string, opts map[string]any) *debatedv1.Debate {
	t.Helper()
	st, err := structpb.NewStruct(opts)
	require.NoError(t, err)
	resp, err := s.debate.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: deal, Protocol: "synthetic.v1", Options: st})
	require.NoError(t, err)
	require.True(t, resp.GetCreated())
	return resp.GetDebate()
}

// protocol returns the protocol ListProtocols lists under name, failing the
// test when it is not listed.
func (s *stack) protocol(t *testing.T, name string) *debatedv1.Protocol {
	t.Helper()
	protos, err := s.debate.ListProtocols(s.a, &debatedv1.ListProtocolsRequest{})
	require.NoError(t, err)
	for _, p := range protos.GetProtocols() {
		if p.GetName() == name {
			return p
		}
	}
	require.FailNow(t, "ListProtocols does not list "+name)
	return nil
}

// watch reads the debate's stream from after until it ends (or until stopAt
// returns true for an event) and returns what it read, one event per
// message: a batch is taken apart, its status going with its last event.
func (s *stack) watch(t *testing.T, ctx context.Context, id string, after int64, stopAt func(*debatedv1.WatchDebateResponse) bool) []*debatedv1.WatchDebateResponse {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := s.debate.WatchDebate(ctx, &debatedv1.WatchDebateRequest{DebateId: id, AfterSeq: after})
	require.NoError(t, err)
	var out []*debatedv1.WatchDebateResponse
	for {
		msg, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		for _, m := range flatten(msg) {
			out = append(out, m)
			if stopAt != nil && stopAt(m) {
				return out
			}
		}
	}
}

// flatten takes a WatchDebate message apart into one message per event,
// the message's status and checkpoint going with its last event.
func flatten(msg *debatedv1.WatchDebateResponse) []*debatedv1.WatchDebateResponse {
	evs := apiconv.WatchEvents(msg)
	out := make([]*debatedv1.WatchDebateResponse, len(evs))
	for i, e := range evs {
		out[i] = &debatedv1.WatchDebateResponse{Event: e}
	}
	if len(out) > 0 {
		out[len(out)-1].Status = msg.GetStatus()
		out[len(out)-1].Checkpoint = msg.GetCheckpoint()
	}
	return out
}

// requireChain checks that streamed events are contiguous from first and
// each names its predecessor's hash.
func requireChain(t *testing.T, msgs []*debatedv1.WatchDebateResponse, first int64) {
	t.Helper()
	require.NotEmpty(t, msgs)
	for i, m := range msgs {
		e := m.GetEvent()
		require.Equal(t, first+int64(i), e.GetSeq(), "events must be contiguous")
		if i > 0 {
			require.Equal(t, msgs[i-1].GetEvent().GetHash(), e.GetPrevHash(), "seq %d does not chain", e.GetSeq())
		}
	}
}

func types(msgs []*debatedv1.WatchDebateResponse) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.GetEvent().GetEventType())
	}
	return out
}

func TestDebateEndToEnd(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, nil)
			d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 2})
			require.Equal(t, "synthetic.v1", d.GetProtocol())

			msgs := s.watch(t, s.a, d.GetDebateId(), 0, nil)
			requireChain(t, msgs, 1)
			last := msgs[len(msgs)-1]
			require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, last.GetStatus())
			require.Equal(t, "debate.stopped", last.GetEvent().GetEventType())
			ts := types(msgs)
			require.Equal(t, "debate.started", ts[0])
			require.Equal(t, 2, strings.Count(strings.Join(ts, " "), "round.completed"))

			got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: d.GetDebateId()})
			require.NoError(t, err)
			require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, got.GetDebate().GetStatus())
			require.Equal(t, "MAX_ROUNDS", got.GetDebate().GetStopReason())
			require.Equal(t, last.GetEvent().GetSeq(), got.GetDebate().GetLastSeq())
			require.Equal(t, last.GetEvent().GetHash(), got.GetDebate().GetHeadHash())

			// A watcher resuming from the middle gets exactly the rest.
			half := int64(len(msgs) / 2)
			rest := s.watch(t, s.a, d.GetDebateId(), half, nil)
			requireChain(t, rest, half+1)
			require.Len(t, rest, len(msgs)-int(half))

			v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: d.GetDebateId()})
			require.NoError(t, err)
			require.True(t, v.GetOk(), "problems: %v", v.GetProblems())
			require.EqualValues(t, len(msgs), v.GetEventCount())

			// The export verifies offline; a changed payload byte does not.
			b, err := ledger.ParseBundle(exportBundle(t, s.a, s.debate, d.GetDebateId()))
			require.NoError(t, err)
			require.True(t, ledger.VerifyBundle(b).OK)
			b.Events[4].Payload = []byte(strings.Replace(string(b.Events[4].Payload), `"`, `"X`, 1))
			rep := ledger.VerifyBundle(b)
			require.False(t, rep.OK)
			require.EqualValues(t, 5, rep.FirstBadSeq)

			list, err := s.debate.ListDebates(s.a, &debatedv1.ListDebatesRequest{Status: debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED})
			require.NoError(t, err)
			require.Len(t, list.GetDebates(), 1)
			protos, err := s.debate.ListProtocols(s.a, &debatedv1.ListProtocolsRequest{})
			require.NoError(t, err)
			require.NotEmpty(t, protos.GetProtocols())
		})
	}
}

func TestDebateIdempotencyAndBadInput(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	opts, err := structpb.NewStruct(map[string]any{"max_rounds": 1})
	require.NoError(t, err)
	req := &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "synthetic.v1", Options: opts, IdempotencyKey: "k-1"}
	first, err := s.debate.CreateDebate(s.a, req)
	require.NoError(t, err)
	require.True(t, first.GetCreated())
	again, err := s.debate.CreateDebate(s.a, req)
	require.NoError(t, err)
	require.False(t, again.GetCreated())
	require.Equal(t, first.GetDebate().GetDebateId(), again.GetDebate().GetDebateId())
	other, err := structpb.NewStruct(map[string]any{"max_rounds": 2})
	require.NoError(t, err)
	_, err = s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "synthetic.v1", Options: other, IdempotencyKey: "k-1"})
	require.Equal(t, codes.AlreadyExists, status.Code(err), "%v", err)

	for _, tc := range []struct {
		req   *debatedv1.CreateDebateRequest
		field string
	}{
		{&debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "no.such.protocol"}, "protocol"},
		{&debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "synthetic.v1", Options: mustStruct(t, map[string]any{"max_rounds": 0})}, "options.max_rounds"},
		{&debatedv1.CreateDebateRequest{DealId: "", Protocol: "synthetic.v1"}, "deal_id"},
	} {
		_, err := s.debate.CreateDebate(s.a, tc.req)
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		var fields []string
		for _, d := range status.Convert(err).Details() {
			if br, ok := d.(*errdetails.BadRequest); ok {
				for _, v := range br.GetFieldViolations() {
					fields = append(fields, v.GetField())
				}
			}
		}
		require.Contains(t, fields, tc.field)
	}
	_, err = s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "no-such-deal", Protocol: "synthetic.v1"})
	require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
	require.Equal(t, `deal "no-such-deal" not found`, status.Convert(err).Message(), "names the deal, not a generated debate id")

	_, err = s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "idis.vc"})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	for _, want := range []string{`"idis.vc"`, "idis.vc.v1", "legal.adat.v1", "agent.protocol.v1", "stratmaster.v1", "synthetic.v1", "debatectl protocols"} {
		require.Contains(t, status.Convert(err).Message(), want, "an unknown protocol lists the valid names")
	}

	// Debate ids are UUIDs the server made: a malformed one is a bad argument,
	// a well-formed one that names nothing is not found.
	for name, call := range map[string]func(id string) error{
		"GetDebate": func(id string) error {
			_, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
			return err
		},
		"CancelDebate": func(id string) error {
			_, err := s.debate.CancelDebate(s.a, &debatedv1.CancelDebateRequest{DebateId: id, Reason: "r"})
			return err
		},
		"WatchDebate": func(id string) error {
			w, err := s.debate.WatchDebate(s.a, &debatedv1.WatchDebateRequest{DebateId: id})
			if err != nil {
				return err
			}
			_, err = w.Recv()
			return err
		},
	} {
		err := call("6f1c-not-a-uuid")
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", name, err)
		require.Contains(t, fieldsOf(err), "debate_id", name)
		err = call("6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30")
		require.Equal(t, codes.NotFound, status.Code(err), "%s: %v", name, err)
	}
}

func fieldsOf(err error) []string {
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	return fields
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	require.NoError(t, err)
	return s
}

// isGate reports whether the message (one event or a batch) holds the
// opening of a human gate.
func isGate(m *debatedv1.WatchDebateResponse) bool {
	for _, e := range apiconv.WatchEvents(m) {
		if e.GetEventType() == "human_gate.created" {
			return true
		}
	}
	return false
}

func TestHumanGateAndCancel(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, nil)
			gateOf := func(id string) string {
				got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
				require.NoError(t, err)
				require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_AWAITING_REVIEW, got.GetDebate().GetStatus())
				require.Len(t, got.GetGates(), 1)
				return got.GetGates()[0].GetGateId()
			}

			// Approve: the debate goes on to its end.
			d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 2, "gate_round": 1})
			s.watch(t, s.a, d.GetDebateId(), 0, isGate)
			gate := gateOf(d.GetDebateId())
			_, err := s.debate.ResolveHumanGate(s.b, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: gate, Approve: true, Reason: "ok"})
			require.Equal(t, codes.NotFound, status.Code(err), "another tenant cannot resolve it")
			_, err = s.debate.ResolveHumanGate(s.a, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: gate, Approve: true, Reason: "numbers checked"})
			require.NoError(t, err)
			msgs := s.watch(t, s.a, d.GetDebateId(), 0, nil)
			requireChain(t, msgs, 1)
			require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus())
			require.Contains(t, types(msgs), "human_gate.resolved")

			// Reject: the protocol stops.
			d = s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 2, "gate_round": 1})
			s.watch(t, s.a, d.GetDebateId(), 0, isGate)
			_, err = s.debate.ResolveHumanGate(s.a, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: gateOf(d.GetDebateId()), Approve: false, Reason: "figures unsupported"})
			require.NoError(t, err)
			s.watch(t, s.a, d.GetDebateId(), 0, nil)
			got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: d.GetDebateId()})
			require.NoError(t, err)
			require.Equal(t, "GATE_REJECTED", got.GetDebate().GetStopReason())

			// Cancel a waiting debate: aborted, its open gate cancelled, and
			// the ledger still verifies.
			d = s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 3, "gate_round": 1})
			s.watch(t, s.a, d.GetDebateId(), 0, isGate)
			open := gateOf(d.GetDebateId())
			_, err = s.debate.CancelDebate(s.b, &debatedv1.CancelDebateRequest{DebateId: d.GetDebateId(), Reason: "not yours"})
			require.Equal(t, codes.NotFound, status.Code(err))
			c, err := s.debate.CancelDebate(s.a, &debatedv1.CancelDebateRequest{DebateId: d.GetDebateId(), Reason: "deal withdrawn"})
			require.NoError(t, err)
			require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_ABORTED, c.GetDebate().GetStatus())
			got, err = s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: d.GetDebateId()})
			require.NoError(t, err)
			require.Len(t, got.GetGates(), 1)
			require.Equal(t, open, got.GetGates()[0].GetGateId())
			require.Equal(t, "cancelled", got.GetGates()[0].GetStatus(), "a cancelled debate's gate is no longer open")
			msgs = s.watch(t, s.a, d.GetDebateId(), 0, nil)
			require.Equal(t, "debate.aborted", msgs[len(msgs)-1].GetEvent().GetEventType())
			require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_ABORTED, msgs[len(msgs)-1].GetStatus())
			_, err = s.debate.CancelDebate(s.a, &debatedv1.CancelDebateRequest{DebateId: d.GetDebateId(), Reason: "again"})
			require.Equal(t, codes.FailedPrecondition, status.Code(err))
			v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: d.GetDebateId()})
			require.NoError(t, err)
			require.True(t, v.GetOk(), "%v", v.GetProblems())
		})
	}
}

// TestDebateTenantIsolation: every debate RPC with tenant B's key on tenant
// A's debate answers NotFound.
func TestDebateTenantIsolation(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 1})
	id := d.GetDebateId()
	calls := map[string]func(ctx context.Context) error{
		"GetDebate": func(ctx context.Context) error {
			_, err := s.debate.GetDebate(ctx, &debatedv1.GetDebateRequest{DebateId: id})
			return err
		},
		"VerifyDebate": func(ctx context.Context) error {
			_, err := s.debate.VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: id})
			return err
		},
		"ExportDebate": func(ctx context.Context) error {
			_, err := readExport(ctx, s.debate, id)
			return err
		},
		"WatchDebate": func(ctx context.Context) error {
			st, err := s.debate.WatchDebate(ctx, &debatedv1.WatchDebateRequest{DebateId: id})
			if err != nil {
				return err
			}
			for {
				if _, err := st.Recv(); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
			}
		},
		"CreateDebate on A's deal": func(ctx context.Context) error {
			if ctx == s.a {
				return nil
			}
			_, err := s.debate.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "synthetic.v1"})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, codes.NotFound, status.Code(call(s.b)), "tenant B")
			require.NoError(t, call(s.a), "tenant A")
		})
	}
	list, err := s.debate.ListDebates(s.b, &debatedv1.ListDebatesRequest{})
	require.NoError(t, err)
	require.Empty(t, list.GetDebates())
}
