package server

import (
	"context"
	"errors"
	"fmt"
	"golang.org/x/sync/singleflight"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/tlog"
)

// LogStore keeps the tenants' transparency logs. Every method is scoped to
// the tenant of the context.
type LogStore interface {
	// LogIntegrate integrates the queued leaves and returns the latest head.
	LogIntegrate(ctx context.Context) (tlog.Head, error)
	// LogNodes returns the hashes of perfect-subtree nodes; ErrDataLoss if
	// one is missing.
	LogNodes(ctx context.Context, ids []tlog.NodeID) ([][]byte, error)
	// LogLeaves returns the integrated leaves about a subject, in seq order.
	LogLeaves(ctx context.Context, kind, subject string) ([]tlog.IndexedLeaf, error)
}

// Log is what LogService needs, and what DebateService uses to check
// debates against the log and to hand out checkpoints.
type Log struct {
	Store LogStore
	Keys  *tlog.Keyring
	// Origin is the deployment's origin base: a tenant's log is
	// tlog.TenantOrigin(Origin, tenant id).
	Origin string

	// latest shares one integration and signature among the concurrent
	// callers of latestCheckpoint of a tenant (a thousand watchers of a
	// debate that just ended ask at once).
	latest singleflight.Group
}

func (l *Log) valid() bool { return l != nil && l.Store != nil && l.Keys != nil && l.Origin != "" }

// LogRuleLog names the problems VerifyDebate finds against the
// transparency log.
const LogRuleLog = "log"

// headAt returns the tree head of size leaves (0: latest), computed from
// the stored nodes so that any size up to the latest can be proved.
// Returns ErrNotFound for a size beyond the log.
func (l *Log) headAt(ctx context.Context, latest tlog.Head, size uint64) (tlog.Head, error) {
	switch {
	case size == 0 || size == latest.Size:
		return latest, nil
	case size > latest.Size:
		return tlog.Head{}, fmt.Errorf("tree size %d: the log has %d leaves: %w", size, latest.Size, debate.ErrNotFound)
	}
	border, err := l.Store.LogNodes(ctx, tlog.BorderIDs(size))
	if err != nil {
		return tlog.Head{}, err
	}
	root, err := tlog.Root(size, border)
	if err != nil {
		return tlog.Head{}, fmt.Errorf("tree size %d: %w: %w", size, debate.ErrDataLoss, err)
	}
	return tlog.Head{Size: size, Root: root}, nil
}

// checkpoint signs head as the caller's tenant's checkpoint.
func (l *Log) checkpoint(ctx context.Context, head tlog.Head) (*debatedv1.Checkpoint, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	cp := tlog.Checkpoint{Origin: tlog.TenantOrigin(l.Origin, tenant), Size: head.Size, Root: head.Root}
	signed, err := l.Keys.Sign(cp)
	if err != nil {
		return nil, err
	}
	return &debatedv1.Checkpoint{SignedNote: string(signed), Origin: cp.Origin, TreeSize: cp.Size, RootHash: cp.Root,
		VerifierKey: l.Keys.VerifierKey()}, nil
}

// latestCheckpoint integrates the tenant's log and signs its head.
func (l *Log) latestCheckpoint(ctx context.Context) (*debatedv1.Checkpoint, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	sign := func() (any, error) {
		// Not bound to the first caller: it may leave while others wait.
		c := context.WithoutCancel(ctx)
		head, err := l.Store.LogIntegrate(c)
		if err != nil {
			return nil, err
		}
		return l.checkpoint(c, head)
	}
	v, err, shared := l.latest.Do(tenant, sign)
	if shared {
		// The flight joined may have integrated before this caller's own
		// commit: a second one starts after this caller arrived, so it
		// covers everything the caller has seen (and is shared too).
		v, err, _ = l.latest.Do(tenant, sign)
	}
	if err != nil {
		return nil, err
	}
	return v.(*debatedv1.Checkpoint), nil
}

// proof builds the proof plan's hashes from the stored nodes.
func (l *Log) proof(ctx context.Context, plan tlog.Plan) ([][]byte, error) {
	hashes, err := l.Store.LogNodes(ctx, plan.IDs())
	if err != nil {
		return nil, err
	}
	return plan.Proof(hashes)
}

// Inclusion is a debate head's inclusion proof in a checkpoint.
type Inclusion struct {
	Leaf       tlog.IndexedLeaf
	Hashes     [][]byte
	Head       tlog.Head
	Checkpoint *debatedv1.Checkpoint
}

// inclusion proves the debate's head at seq (0: its latest logged head) in
// the tree of size leaves (0: latest). Returns ErrNotFound if the debate
// has no such logged head (another tenant's debate has none).
func (l *Log) inclusion(ctx context.Context, debateID string, seq int64, size uint64) (Inclusion, error) {
	latest, err := l.Store.LogIntegrate(ctx)
	if err != nil {
		return Inclusion{}, err
	}
	leaves, err := l.Store.LogLeaves(ctx, tlog.KindStep, debateID)
	if err != nil {
		return Inclusion{}, err
	}
	var leaf *tlog.IndexedLeaf
	for i := range leaves {
		if seq == 0 || leaves[i].Leaf.Seq == seq {
			leaf = &leaves[i]
		}
	}
	if leaf == nil {
		return Inclusion{}, fmt.Errorf("debate %q has no logged head at seq %d (only a committed step's last event is a leaf): %w", debateID, seq, debate.ErrNotFound)
	}
	head, err := l.headAt(ctx, latest, size)
	if err != nil {
		return Inclusion{}, err
	}
	if leaf.Index >= head.Size {
		return Inclusion{}, fmt.Errorf("leaf %d (seq %d) is not in the tree of size %d: ask for a later checkpoint: %w", leaf.Index, leaf.Leaf.Seq, head.Size, debate.ErrFailedPrecondition)
	}
	plan, err := tlog.InclusionPlan(leaf.Index, head.Size)
	if err != nil {
		return Inclusion{}, err
	}
	hashes, err := l.proof(ctx, plan)
	if err != nil {
		return Inclusion{}, err
	}
	cp, err := l.checkpoint(ctx, head)
	if err != nil {
		return Inclusion{}, err
	}
	return Inclusion{Leaf: *leaf, Hashes: hashes, Head: head, Checkpoint: cp}, nil
}

// checkDebate checks a debate's ledger against its leaves in the log: every
// logged head is an event of the ledger with the same hash, and the
// ledger's last event is a logged head. So events deleted from the
// database, and the head columns rewritten to match, are caught. before is
// the head integrated before the events were read: only its leaves must
// have their events among them (a running debate's later steps may have
// been logged since). It returns the problems found and the checkpoint it
// checked against.
func (l *Log) checkDebate(ctx context.Context, d debate.Debate, events []debate.Event, before tlog.Head) ([]ledger.Problem, *debatedv1.Checkpoint, error) {
	head, err := l.Store.LogIntegrate(ctx)
	if err != nil {
		return nil, nil, err
	}
	leaves, err := l.Store.LogLeaves(ctx, tlog.KindStep, d.ID)
	if err != nil {
		return nil, nil, err
	}
	bySeq := make(map[int64]string, len(events))
	for _, e := range events {
		bySeq[e.Seq] = e.Hash
	}
	problems := leafProblems(leaves, bySeq, before, "seq", "the ledger")
	var lastLeaf *tlog.IndexedLeaf
	if n := len(events); n > 0 {
		last := events[n-1]
		for i := range leaves {
			if leaves[i].Leaf.Seq == last.Seq && leaves[i].Leaf.Hash == last.Hash {
				lastLeaf = &leaves[i]
			}
		}
		if lastLeaf == nil {
			problems = append(problems, ledger.Problem{Seq: last.Seq, Rule: LogRuleLog, Detail: fmt.Sprintf(
				"the ledger's last event (seq %d) is not a head the transparency log recorded", last.Seq)})
		}
	}
	if lastLeaf != nil {
		// The leaf's row must be in the tree the checkpoint signs.
		plan, err := tlog.InclusionPlan(lastLeaf.Index, head.Size)
		if err != nil {
			return nil, nil, fmt.Errorf("leaf %d beyond the log's %d: %w", lastLeaf.Index, head.Size, debate.ErrDataLoss)
		}
		hashes, perr := l.proof(ctx, plan)
		leafHash, herr := lastLeaf.Leaf.LeafHash()
		if err := errors.Join(perr, herr); err != nil {
			problems = append(problems, ledger.Problem{Seq: lastLeaf.Leaf.Seq, Rule: LogRuleLog, Detail: "the log cannot prove the debate's last head: " + err.Error()})
		} else if err := tlog.VerifyInclusion(lastLeaf.Index, head.Size, leafHash, hashes, head.Root); err != nil {
			problems = append(problems, ledger.Problem{Seq: lastLeaf.Leaf.Seq, Rule: LogRuleLog, Detail: "the debate's last head is not in the log's tree: the log was changed"})
		}
	}
	cp, err := l.checkpoint(ctx, head)
	if err != nil {
		return nil, nil, err
	}
	return problems, cp, nil
}

// logService implements LogService.
type logService struct {
	debatedv1.UnimplementedLogServiceServer
	s *Server
	l *Log
}

func (ls *logService) GetCheckpoint(ctx context.Context, req *debatedv1.GetCheckpointRequest) (*debatedv1.GetCheckpointResponse, error) {
	latest, err := ls.l.Store.LogIntegrate(ctx)
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	head, err := ls.l.headAt(ctx, latest, req.GetTreeSize())
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	cp, err := ls.l.checkpoint(ctx, head)
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	return &debatedv1.GetCheckpointResponse{Checkpoint: cp}, nil
}

func (ls *logService) GetInclusionProof(ctx context.Context, req *debatedv1.GetInclusionProofRequest) (*debatedv1.GetInclusionProofResponse, error) {
	inc, err := ls.l.inclusion(ctx, req.GetDebateId(), req.GetSeq(), req.GetTreeSize())
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	return &debatedv1.GetInclusionProofResponse{
		LeafIndex: inc.Leaf.Index, Kind: inc.Leaf.Leaf.Kind, Subject: inc.Leaf.Leaf.Subject, Seq: inc.Leaf.Leaf.Seq,
		EventHash: inc.Leaf.Leaf.Hash, Hashes: inc.Hashes, Checkpoint: inc.Checkpoint,
	}, nil
}

func (ls *logService) GetConsistencyProof(ctx context.Context, req *debatedv1.GetConsistencyProofRequest) (*debatedv1.GetConsistencyProofResponse, error) {
	latest, err := ls.l.Store.LogIntegrate(ctx)
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	to, err := ls.l.headAt(ctx, latest, req.GetToSize())
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	if req.GetFromSize() > to.Size {
		return nil, badRequest([]debate.FieldViolation{{Field: "from_size", Description: fmt.Sprintf("must be at most to_size (%d)", to.Size)}})
	}
	plan, err := tlog.ConsistencyPlan(req.GetFromSize(), to.Size)
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	hashes, err := ls.l.proof(ctx, plan)
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	cp, err := ls.l.checkpoint(ctx, to)
	if err != nil {
		return nil, toStatus(ctx, ls.s.log, err)
	}
	return &debatedv1.GetConsistencyProofResponse{FromSize: req.GetFromSize(), ToSize: to.Size, Hashes: hashes, Checkpoint: cp}, nil
}

// checkDeal checks a deal's chained audit events against the deal's leaves
// in the tenant's log: every head the log recorded (integrated by before)
// is an event with the same hash, and the last event is a recorded head,
// so events deleted from the end of the audit log, or rewritten, are
// caught even though the deal keeps no head of its own.
func (l *Log) checkDeal(ctx context.Context, dealID string, events []ledger.DealEvent, before tlog.Head) ([]ledger.Problem, error) {
	leaves, err := l.Store.LogLeaves(ctx, tlog.KindDeal, dealID)
	if err != nil {
		return nil, err
	}
	bySeq := make(map[int64]string, len(events))
	for _, e := range events {
		bySeq[e.Seq] = e.Hash
	}
	problems := leafProblems(leaves, bySeq, before, "deal event", "the audit log")
	logged := false
	for _, il := range leaves {
		if n := len(events); n > 0 && il.Leaf.Seq == events[n-1].Seq && il.Leaf.Hash == events[n-1].Hash {
			logged = true
		}
	}
	if n := len(events); n > 0 && !logged {
		problems = append(problems, ledger.Problem{Seq: events[n-1].Seq, Rule: LogRuleLog, Detail: fmt.Sprintf(
			"the audit log's last event (seq %d) is not a head the transparency log recorded", events[n-1].Seq)})
	}
	return problems, nil
}

// leafProblems compares the heads a log recorded about one subject with the
// events' hashes by seq (what names an event, where holds them): every
// leaf integrated by before must be an event with the same hash. A leaf
// logged after the events were read is left to the caller's check of the
// last event.
func leafProblems(leaves []tlog.IndexedLeaf, bySeq map[int64]string, before tlog.Head, what, where string) []ledger.Problem {
	var problems []ledger.Problem
	for _, il := range leaves {
		hash, ok := bySeq[il.Leaf.Seq]
		switch {
		case il.Index >= before.Size:
		case !ok:
			problems = append(problems, ledger.Problem{Seq: il.Leaf.Seq, Rule: LogRuleLog, Detail: fmt.Sprintf(
				"the transparency log records %s %d (leaf %d) but %s has no such event: events were removed", what, il.Leaf.Seq, il.Index, where)})
		case hash != il.Leaf.Hash:
			problems = append(problems, ledger.Problem{Seq: il.Leaf.Seq, Rule: LogRuleLog, Detail: fmt.Sprintf(
				"the transparency log records hash %s for %s %d (leaf %d), %s has %s: the event was rewritten", il.Leaf.Hash, what, il.Leaf.Seq, il.Index, where, hash)})
		}
	}
	return problems
}
