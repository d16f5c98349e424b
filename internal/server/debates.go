package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/stream"
	"github.com/debated/debated/internal/tlog"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
)

// DebateEngine makes the commits of operator acts; the runner makes the
// others.
type DebateEngine interface {
	Abort(d debate.Debate, reason string, by debate.Authority, open ...debate.HumanGate) (*debate.StepCommit, error)
	ResolveGate(d debate.Debate, g debate.HumanGate, approve bool, reason string, by debate.Authority) (*debate.StepCommit, error)
}

// Debates is what DebateService needs. Without it the service is not
// registered.
type Debates struct {
	Store     debate.DebateStore
	Engine    DebateEngine
	Protocols *orchestrator.Registry
	Keys      *ledger.Keyring
	Hub       *stream.Hub
	// Custom, when set, holds the protocols tenants register as data
	// (ProtocolService); Protocols must resolve their NAME@VERSION names
	// (orchestrator.NewResolvingRegistry) for their debates to run and
	// verify.
	Custom CustomProtocols
	// Observe, if set, sees every operator act's commit (metrics).
	Observe func(d debate.Debate, c *debate.StepCommit)
	// Outputs names the protocol whose agent outputs ValidateOutput checks
	// (through its CheckOutput hook); empty: ValidateOutput is
	// unimplemented.
	Outputs string
}

func (d *Debates) valid() bool {
	return d != nil && d.Store != nil && d.Engine != nil && d.Protocols != nil && d.Keys != nil && d.Hub != nil
}

// debateService implements DebateService.
type debateService struct {
	debatedv1.UnimplementedDebateServiceServer
	s *Server
	Debates
	tlog *Log // nil: no transparency log
}

// maxCommitRetries bounds how often an operator act retries after losing
// the commit race to a running step.
const maxCommitRetries = 20

func (ds *debateService) CreateDebate(ctx context.Context, req *debatedv1.CreateDebateRequest) (*debatedv1.CreateDebateResponse, error) {
	s := ds.s
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	p, err := ds.protocolFor(ctx, req.GetProtocol())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	raw := json.RawMessage("{}")
	if req.GetOptions() != nil {
		if raw, err = protojson.Marshal(req.GetOptions()); err != nil {
			return nil, badRequest([]debate.FieldViolation{{Field: "options", Description: "not a JSON object"}})
		}
	}
	opts, err := p.ValidateOptions(raw)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := ds.checkRunning(ctx); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	sum := sha256.Sum256([]byte(req.GetDealId() + "\x00" + req.GetProtocol() + "\x00" + string(opts)))
	now := s.now().UTC()
	d := debate.Debate{
		ID:             uuid.NewString(),
		TenantID:       tenant,
		DealID:         req.GetDealId(),
		Protocol:       p.Name,
		Options:        opts,
		IdempotencyKey: req.GetIdempotencyKey(),
		RequestHash:    hex.EncodeToString(sum[:]),
		Status:         debate.DebateQueued,
		CreatedAt:      now,
		UpdatedAt:      now,
	}
	stored, created, err := ds.Store.DebateCreate(ctx, d)
	if errors.Is(err, debate.ErrNotFound) {
		// The only thing a new debate can miss is its deal: name the deal the
		// caller gave, not the id just generated for a debate that never was.
		return nil, toStatus(ctx, s.log, fmt.Errorf("deal %q %w", req.GetDealId(), debate.ErrNotFound))
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.CreateDebateResponse{Debate: apiconv.DebateToProto(stored), Created: created}, nil
}

// unknownProtocol says that name is no protocol and lists those that are,
// so the caller can correct a typo without another round trip.
func unknownProtocol(name string, reg *orchestrator.Registry) string {
	names := make([]string, 0, 8)
	for _, p := range reg.List() {
		names = append(names, p.Name)
	}
	return fmt.Sprintf("unknown protocol %q; built-in protocols: %s, or one your tenant registered (`debatectl protocols` lists and describes each)", name, strings.Join(names, ", "))
}

func (ds *debateService) GetDebate(ctx context.Context, req *debatedv1.GetDebateRequest) (*debatedv1.GetDebateResponse, error) {
	d, err := ds.Store.DebateGet(ctx, req.GetDebateId())
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	gates, err := ds.Store.GateList(ctx, d.ID)
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	out := &debatedv1.GetDebateResponse{Debate: apiconv.DebateToProto(d)}
	for _, g := range gates {
		out.Gates = append(out.Gates, apiconv.GateToProto(g))
	}
	if ds.tlog != nil {
		// Integrated after the read: the checkpoint covers the head returned.
		if out.Checkpoint, err = ds.tlog.latestCheckpoint(ctx); err != nil {
			return nil, toStatus(ctx, ds.s.log, err)
		}
	}
	return out, nil
}

func (ds *debateService) ListDebates(ctx context.Context, req *debatedv1.ListDebatesRequest) (*debatedv1.ListDebatesResponse, error) {
	filter := debate.DebateFilter{Status: apiconv.DebateStatusFromProto(req.GetStatus()), DealID: req.GetDealId()}
	list, next, err := ds.Store.DebateList(ctx, filter, debate.Page{After: req.GetPageToken(), Limit: int(req.GetPageSize())})
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	out := &debatedv1.ListDebatesResponse{NextPageToken: next}
	for _, d := range list {
		out.Debates = append(out.Debates, apiconv.DebateToProto(d))
	}
	return out, nil
}

// operatorCommit makes and commits an operator act, retrying when a running
// step commits first.
func (ds *debateService) operatorCommit(ctx context.Context, debateID string, make func(d debate.Debate) (*debate.StepCommit, error)) (debate.Debate, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Debate{}, err
	}
	for range maxCommitRetries {
		d, err := ds.Store.DebateGet(ctx, debateID)
		if err != nil {
			return debate.Debate{}, err
		}
		c, err := make(d)
		if err != nil {
			return debate.Debate{}, err
		}
		err = ds.Store.StepCommit(ctx, *c)
		if errors.Is(err, debate.ErrConflict) {
			continue
		}
		if err != nil {
			return debate.Debate{}, err
		}
		ds.Hub.Publish(tenant, debateID, c.Events)
		if ds.Observe != nil {
			ds.Observe(d, c)
		}
		return ds.Store.DebateGet(ctx, debateID)
	}
	return debate.Debate{}, fmt.Errorf("debate %s is too busy to take the act now, try again: %w", debateID, debate.ErrFailedPrecondition)
}

func (ds *debateService) CancelDebate(ctx context.Context, req *debatedv1.CancelDebateRequest) (*debatedv1.CancelDebateResponse, error) {
	by := authorityOf(ctx, "")
	d, err := ds.operatorCommit(ctx, req.GetDebateId(), func(d debate.Debate) (*debate.StepCommit, error) {
		var open []debate.HumanGate
		if d.Status == debate.DebateAwaitingReview {
			gates, err := ds.Store.GateList(ctx, d.ID)
			if err != nil {
				return nil, err
			}
			open = gates
		}
		return ds.Engine.Abort(d, req.GetReason(), by, open...)
	})
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	return &debatedv1.CancelDebateResponse{Debate: apiconv.DebateToProto(d)}, nil
}

func (ds *debateService) ResolveHumanGate(ctx context.Context, req *debatedv1.ResolveHumanGateRequest) (*debatedv1.ResolveHumanGateResponse, error) {
	by := authorityOf(ctx, req.GetActor())
	d, err := ds.operatorCommit(ctx, req.GetDebateId(), func(d debate.Debate) (*debate.StepCommit, error) {
		g, err := ds.Store.GateGet(ctx, d.ID, req.GetGateId())
		if errors.Is(err, debate.ErrNotFound) {
			return nil, fmt.Errorf("gate %q of debate %q: %w", req.GetGateId(), d.ID, debate.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		return ds.Engine.ResolveGate(d, g, req.GetApprove(), req.GetReason(), by)
	})
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	return &debatedv1.ResolveHumanGateResponse{Debate: apiconv.DebateToProto(d)}, nil
}

func (ds *debateService) ListProtocols(ctx context.Context, _ *debatedv1.ListProtocolsRequest) (*debatedv1.ListProtocolsResponse, error) {
	out := &debatedv1.ListProtocolsResponse{}
	for _, p := range ds.Protocols.List() {
		out.Protocols = append(out.Protocols, protocolToProto(p))
	}
	registered, err := ds.registeredProtocols(ctx)
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	out.Protocols = append(out.Protocols, registered...)
	return out, nil
}

// protocolToProto describes a protocol for ListProtocols.
func protocolToProto(p *orchestrator.Protocol) *debatedv1.Protocol {
	{
		pp := &debatedv1.Protocol{
			Name:        p.Name,
			Description: p.Description,
			Roles:       p.Roles,
			Start:       p.Start,
			Tools:       map[string]*debatedv1.ToolPermissions{},
			RoleGuard:   map[string]*debatedv1.RoleEvents{},
		}
		for _, n := range p.Nodes {
			pn := &debatedv1.ProtocolNode{Name: n.Name, Actor: n.Actor, Next: n.Edges}
			for _, b := range n.Branches {
				pn.Branches = append(pn.Branches, &debatedv1.ProtocolNode{Name: b.Name, Actor: b.Actor})
			}
			pp.Nodes = append(pp.Nodes, pn)
		}
		for role, tools := range p.Tools {
			pp.Tools[role] = &debatedv1.ToolPermissions{Tools: tools}
		}
		for typ, actors := range p.MergedRoleGuard() {
			pp.RoleGuard[typ] = &debatedv1.RoleEvents{Actors: actors}
		}
		return pp
	}
}

// ledgerOf reads a debate's whole ledger and the policy and keys to verify
// it with.
func (ds *debateService) ledgerOf(ctx context.Context, debateID string) (debate.Debate, []debate.Event, ledger.Policy, map[string]ledger.PublicKeyInfo, error) {
	d, err := ds.Store.DebateGet(ctx, debateID)
	if err != nil {
		return d, nil, ledger.Policy{}, nil, err
	}
	events, err := debate.Ledger(ctx, ds.Store, debateID)
	if err != nil {
		return d, nil, ledger.Policy{}, nil, err
	}
	var policy ledger.Policy
	if p, err := ds.Protocols.Resolve(ctx, d.TenantID, d.Protocol); err == nil {
		policy = LedgerPolicy(p)
	}
	actors := ledger.Actors(events)
	return d, events, policy, ds.Keys.PublicKeys(d.TenantID, actors), nil
}

// LedgerPolicy is the verification policy of a protocol's debates: its role
// guard merged with the engine's, and nothing after the debate's end.
func LedgerPolicy(p *orchestrator.Protocol) ledger.Policy {
	return ledger.Policy{
		RoleGuard:   p.MergedRoleGuard(),
		StrictRoles: true,
		Bookkeeping: orchestrator.EngineEventTypes(),
		Terminal:    orchestrator.TerminalEventTypes(),
	}
}

func (ds *debateService) VerifyDebate(ctx context.Context, req *debatedv1.VerifyDebateRequest) (*debatedv1.VerifyDebateResponse, error) {
	var before tlog.Head
	if ds.tlog != nil {
		// Integrated before the events are read: every leaf of this head
		// has its events among them.
		var err error
		if before, err = ds.tlog.Store.LogIntegrate(ctx); err != nil {
			return nil, toStatus(ctx, ds.s.log, err)
		}
	}
	d, events, policy, keys, err := ds.ledgerOf(ctx, req.GetDebateId())
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	rep := ledger.Verify(events, keys, policy)
	out := &debatedv1.VerifyDebateResponse{Ok: rep.OK, FirstBadSeq: rep.FirstBadSeq, EventCount: int64(len(events)), HeadHash: d.HeadHash}
	for _, p := range rep.Problems {
		out.Problems = append(out.Problems, &debatedv1.VerifyProblem{Seq: p.Seq, Rule: p.Rule, Detail: p.Detail})
	}
	if rep.OK && len(events) > 0 && events[len(events)-1].Hash != d.HeadHash {
		out.Ok = false
		out.FirstBadSeq = events[len(events)-1].Seq
		out.Problems = append(out.Problems, &debatedv1.VerifyProblem{Seq: out.FirstBadSeq, Rule: "head", Detail: "the last event is not the debate's recorded head: events are missing"})
	}
	var more []ledger.Problem
	if d.Status.Terminal() && !ledger.HasTerminal(events, policy) {
		seq := int64(0)
		if n := len(events); n > 0 {
			seq = events[n-1].Seq
		}
		more = append(more, ledger.Problem{Seq: seq, Rule: ledger.RuleTerminal, Detail: fmt.Sprintf(
			"the debate is %s but its ledger has no terminal event: it ends early (events were removed)", d.Status)})
	}
	if ds.tlog != nil {
		problems, _, err := ds.tlog.checkDebate(ctx, d, events, before)
		if err != nil {
			return nil, toStatus(ctx, ds.s.log, err)
		}
		more = append(more, problems...)
	}
	for _, p := range more {
		if out.Ok || p.Seq < out.FirstBadSeq {
			out.FirstBadSeq = p.Seq
		}
		out.Ok = false
		out.Problems = append(out.Problems, &debatedv1.VerifyProblem{Seq: p.Seq, Rule: p.Rule, Detail: p.Detail})
	}
	return out, nil
}

// exportChunk is the most bundle bytes one ExportDebate message carries:
// far below gRPC's default 4 MiB receive limit.
const exportChunk = 1 << 20

// ExportDebate streams the debate's bundle (exportBundle) in pieces of at
// most exportChunk bytes; the first says the bundle's size.
func (ds *debateService) ExportDebate(req *debatedv1.ExportDebateRequest, srv grpc.ServerStreamingServer[debatedv1.ExportDebateResponse]) error {
	ctx := srv.Context()
	data, err := ds.exportBundle(ctx, req.GetDebateId())
	if err != nil {
		return toStatus(ctx, ds.s.log, err)
	}
	for off := 0; off == 0 || off < len(data); off += exportChunk {
		msg := &debatedv1.ExportDebateResponse{Chunk: data[off:min(off+exportChunk, len(data))]}
		if off == 0 {
			msg.TotalBytes = int64(len(data))
		}
		if err := srv.Send(msg); err != nil {
			return err
		}
	}
	return nil
}

// exportBundle builds the JSON bundle of a debate that `debatectl verify`
// checks offline: everything a bundle carries is put together here, once.
func (ds *debateService) exportBundle(ctx context.Context, debateID string) ([]byte, error) {
	d, events, policy, keys, err := ds.ledgerOf(ctx, debateID)
	if err != nil {
		return nil, err
	}
	b := ledger.NewBundle(d.ID, d.TenantID, events, keys, policy)
	b.Protocol = d.Protocol
	if ds.tlog != nil && len(events) > 0 {
		inc, err := ds.tlog.inclusion(ctx, d.ID, events[len(events)-1].Seq, 0)
		switch {
		case errors.Is(err, debate.ErrNotFound):
			// The last event is no logged head (a debate older than the log,
			// or a damaged one): the bundle goes without a log proof, and
			// verify says the log was not checked.
		case err != nil:
			return nil, err
		default:
			b.Log = &ledger.BundleLog{Checkpoint: inc.Checkpoint.GetSignedNote(), LeafIndex: inc.Leaf.Index,
				InclusionProof: inc.Hashes, DebateStatus: string(d.Status)}
		}
	}
	return ledger.MarshalBundle(b)
}
