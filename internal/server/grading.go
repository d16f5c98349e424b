package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/sanad"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// GradeDeal implements RegistryService: it grades the deal with its defect
// records, stores the dashboard and records what changed, all in one
// transaction, and answers the dashboard's summary and first page. A deal
// larger than the server grades is refused before anything is written; the
// gradings running at once hold at most Config.GradingClaimBudget claims.
func (s *Server) GradeDeal(ctx context.Context, req *debatedv1.GradeDealRequest) (*debatedv1.GradeDealResponse, error) {
	release, err := s.gradingSlot(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	defer release()
	now := s.now().UTC()
	g, evs, err := s.grading.DealGrade(ctx, req.GetDealId(), now,
		func(b *debate.DealBundle, records []debate.Defect, prev *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
			next, upsert, events := sanad.Regrade(b, records, prev, now)
			return next, upsert, events, nil
		})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	claims, calcs, next, err := gradingPage(g, now, int(req.GetPageSize()), "")
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.GradeDealResponse{Summary: apiconv.DealGradingSummaryToProto(g, now),
		Claims: claims, Calcs: calcs, NextPageToken: next, EventCount: int32(len(evs))}
	if len(evs) > 0 {
		out.FirstEventSeq, out.LastEventSeq = evs[0].Seq, evs[len(evs)-1].Seq
	}
	return out, nil
}

// GetDealGrading implements RegistryService: a page of the deal's last
// stored dashboard.
func (s *Server) GetDealGrading(ctx context.Context, req *debatedv1.GetDealGradingRequest) (*debatedv1.GetDealGradingResponse, error) {
	g, at, err := s.grading.GradingGet(ctx, req.GetDealId())
	if errors.Is(err, debate.ErrNotFound) {
		if _, derr := s.registry.DealGet(ctx, req.GetDealId()); derr == nil {
			err = fmt.Errorf("deal %q was never graded (GradeDeal grades it): %w", req.GetDealId(), debate.ErrFailedPrecondition)
		}
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	claims, calcs, next, err := gradingPage(g, at, int(req.GetPageSize()), req.GetPageToken())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.GetDealGradingResponse{Summary: apiconv.DealGradingSummaryToProto(g, at),
		Claims: claims, Calcs: calcs, NextPageToken: next}, nil
}

// Page sizes of the dashboard's rows.
const (
	defaultGradingPage = 100
	maxGradingPage     = 1000
)

// gradingPage returns a page of g's rows (its claims, then its calcs) from
// the position token names, and the token of the next page ("" after the
// last). A token is "GRADED_AT_MICROS.OFFSET": it names the grading it
// pages, so that a page of a newer grading is never mixed with an older
// one's (FailedPrecondition: start again).
func gradingPage(g *debate.DealGrading, at time.Time, size int, token string) ([]*debatedv1.ClaimGrading, []*debatedv1.CalcGrading, string, error) {
	if size <= 0 {
		size = defaultGradingPage
	}
	size = min(size, maxGradingPage)
	offset := 0
	if token != "" {
		stamp, off, ok := strings.Cut(token, ".")
		micros, err1 := strconv.ParseInt(stamp, 10, 64)
		n, err2 := strconv.Atoi(off)
		if !ok || err1 != nil || err2 != nil || n < 0 {
			return nil, nil, "", &debate.ValidationError{Violations: []debate.FieldViolation{{Field: "page_token", Description: "is not a token this service issued"}}}
		}
		if micros != at.UnixMicro() {
			return nil, nil, "", fmt.Errorf("the deal was graded again since this page token was issued: start from the first page: %w", debate.ErrFailedPrecondition)
		}
		offset = n
	}
	total := len(g.Claims) + len(g.Calcs)
	end := min(offset+size, total)
	var claims []*debatedv1.ClaimGrading
	var calcs []*debatedv1.CalcGrading
	for i := offset; i < end; i++ {
		if i < len(g.Claims) {
			claims = append(claims, apiconv.ClaimGradeToProto(g.Claims[i]))
		} else {
			calcs = append(calcs, apiconv.CalcResultToProto(g.Calcs[i-len(g.Claims)]))
		}
	}
	next := ""
	if end < total {
		next = fmt.Sprintf("%d.%d", at.UnixMicro(), end)
	}
	return claims, calcs, next, nil
}

// claimGrading returns the row of claim claimID in g, or nil.
func claimGrading(g *debate.DealGrading, claimID string) *debatedv1.ClaimGrading {
	for _, c := range g.Claims {
		if c.ClaimID == claimID {
			return apiconv.ClaimGradeToProto(c)
		}
	}
	return nil
}

// gradingSlot admits a grading of the deal: it refuses, before anything is
// read in full or written, a deal with more claims than
// Config.MaxGradeClaims, and waits (until ctx ends) until the gradings
// running at once hold no more than Config.GradingClaimBudget claims, so
// memory stays bounded however many clients grade large deals. The caller
// calls release when its grading is done.
func (s *Server) gradingSlot(ctx context.Context, dealID string) (release func(), err error) {
	d, err := s.registry.DealGet(ctx, dealID)
	if err != nil {
		return nil, err
	}
	if limit := s.maxGradeClaims(); d.ClaimCount > limit {
		return nil, fmt.Errorf("deal %q has %d claims, more than the %d this server grades at once (DEBATED_MAX_GRADE_CLAIMS): %w",
			dealID, d.ClaimCount, limit, debate.ErrFailedPrecondition)
	}
	w := min(int64(max(d.ClaimCount, 1)), s.gradingBudget.capacity)
	if err := s.gradingBudget.sem.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { s.gradingBudget.sem.Release(w) }, nil
}

// Defaults of the grading bounds (Config.MaxGradeClaims,
// Config.GradingClaimBudget): the import's own maximum, and two such deals
// at once.
const (
	DefaultMaxGradeClaims     = 20000
	DefaultGradingClaimBudget = 2 * DefaultMaxGradeClaims
)

func (s *Server) maxGradeClaims() int { return cmp.Or(s.cfg.MaxGradeClaims, DefaultMaxGradeClaims) }

// authorityOf is the authority of the caller's act: its authenticated key
// and scopes, and label as the actor it claims to be (empty: none).
func authorityOf(ctx context.Context, label string) debate.Authority {
	p, _ := debate.PrincipalFrom(ctx)
	return debate.AuthorityOf(p, label)
}

// withAuthority records a in a deal event's payload (under "authority");
// the event's actor stays the name shown, a.Actor().
func withAuthority(ev debate.DealEvent, a debate.Authority) debate.DealEvent {
	p := make(map[string]any, len(ev.Payload)+1)
	for k, v := range ev.Payload {
		p[k] = v
	}
	p["authority"] = a.Map()
	ev.Payload = p
	return ev
}

// FlagDefect implements RegistryService.
func (s *Server) FlagDefect(ctx context.Context, req *debatedv1.FlagDefectRequest) (*debatedv1.FlagDefectResponse, error) {
	now := s.now().UTC()
	by := authorityOf(ctx, req.GetActor())
	params := sanad.FlagParams{
		ID:           "dfl_" + uuid.NewString(),
		ClaimID:      req.GetClaimId(),
		Type:         apiconv.DefectTypeFromProto(req.GetDefectType()),
		Severity:     apiconv.SeverityFromProto(req.GetSeverity()),
		CureProtocol: apiconv.CureFromProto(req.GetCureProtocol()),
		Description:  req.GetDescription(),
		EvidenceRefs: req.GetEvidenceRefs(),
		Actor:        by.Actor(),
	}
	release, err := s.gradingSlot(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	defer release()
	var flagged debate.Defect
	g, _, err := s.grading.DealGrade(ctx, req.GetDealId(), now,
		func(b *debate.DealBundle, records []debate.Defect, prev *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
			d, ev, err := sanad.Flag(b, params, now)
			if err != nil {
				return nil, nil, nil, err
			}
			flagged = d
			next, upsert, events := sanad.Regrade(b, append(records, d), prev, now)
			return next, append(upsert, d), append([]debate.DealEvent{withAuthority(ev, by)}, events...), nil
		})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.FlagDefectResponse{Defect: apiconv.DefectToProto(flagged), Summary: apiconv.DealGradingSummaryToProto(g, now),
		Claim: claimGrading(g, flagged.ClaimID)}, nil
}

// CureDefect implements RegistryService.
func (s *Server) CureDefect(ctx context.Context, req *debatedv1.CureDefectRequest) (*debatedv1.CureDefectResponse, error) {
	d, g, now, err := s.closeDefect(ctx, req.GetDealId(), req.GetDefectId(), debate.DefectCured, authorityOf(ctx, req.GetActor()), req.GetReason())
	if err != nil {
		return nil, err
	}
	return &debatedv1.CureDefectResponse{Defect: apiconv.DefectToProto(d), Summary: apiconv.DealGradingSummaryToProto(g, now),
		Claim: claimGrading(g, d.ClaimID)}, nil
}

// WaiveDefect implements RegistryService. Waiving accepts a defect without
// curing it, so it needs an API key with the admin scope.
func (s *Server) WaiveDefect(ctx context.Context, req *debatedv1.WaiveDefectRequest) (*debatedv1.WaiveDefectResponse, error) {
	if p, _ := debate.PrincipalFrom(ctx); !p.HasScope(debate.ScopeAdmin) {
		return nil, status.Error(codes.PermissionDenied, "waiving a defect needs an API key with the admin scope")
	}
	d, g, now, err := s.closeDefect(ctx, req.GetDealId(), req.GetDefectId(), debate.DefectWaived, authorityOf(ctx, req.GetActor()), req.GetReason())
	if err != nil {
		return nil, err
	}
	return &debatedv1.WaiveDefectResponse{Defect: apiconv.DefectToProto(d), Summary: apiconv.DealGradingSummaryToProto(g, now),
		Claim: claimGrading(g, d.ClaimID)}, nil
}

// closeDefect cures or waives a defect and re-grades, in one transaction. A
// deal never graded is graded first, so its detected defects have records.
func (s *Server) closeDefect(ctx context.Context, dealID, defectID string, st debate.DefectStatus, by debate.Authority, reason string) (debate.Defect, *debate.DealGrading, time.Time, error) {
	release, err := s.gradingSlot(ctx, dealID)
	if err != nil {
		return debate.Defect{}, nil, time.Time{}, toStatus(ctx, s.log, err)
	}
	defer release()
	now := s.now().UTC()
	var closed debate.Defect
	g, _, err := s.grading.DealGrade(ctx, dealID, now,
		func(b *debate.DealBundle, records []debate.Defect, prev *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
			current, up1, ev1 := sanad.Regrade(b, records, prev, now)
			all := append(append([]debate.Defect(nil), records...), up1...)
			d, ev, err := sanad.Close(all, defectID, st, by.Actor(), reason, now)
			if err != nil {
				return nil, nil, nil, err
			}
			closed = d
			for i := range all {
				if all[i].ID == d.ID {
					all[i] = d
				}
			}
			next, up2, ev2 := sanad.Regrade(b, all, current, now)
			upsert := dedupeByID(append(append(up1, d), up2...))
			events := append(append(ev1, withAuthority(ev, by)), ev2...)
			return next, upsert, events, nil
		})
	if err != nil {
		return debate.Defect{}, nil, now, toStatus(ctx, s.log, err)
	}
	return closed, g, now, nil
}

// dedupeByID keeps the last record of each id, in first-seen order.
func dedupeByID(ds []debate.Defect) []debate.Defect {
	pos := map[string]int{}
	var out []debate.Defect
	for _, d := range ds {
		if i, ok := pos[d.ID]; ok {
			out[i] = d
			continue
		}
		pos[d.ID] = len(out)
		out = append(out, d)
	}
	return out
}

// ListDefects implements RegistryService.
func (s *Server) ListDefects(ctx context.Context, req *debatedv1.ListDefectsRequest) (*debatedv1.ListDefectsResponse, error) {
	ds, err := s.grading.DefectList(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.ListDefectsResponse{}
	for _, d := range ds {
		if d.Open() || req.GetIncludeClosed() {
			out.Defects = append(out.Defects, apiconv.DefectToProto(d))
		}
	}
	return out, nil
}

// ListDealEvents implements RegistryService.
func (s *Server) ListDealEvents(ctx context.Context, req *debatedv1.ListDealEventsRequest) (*debatedv1.ListDealEventsResponse, error) {
	evs, err := s.grading.DealEventList(ctx, req.GetDealId(), req.GetAfterSeq(), int(req.GetPageSize()))
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.ListDealEventsResponse{}
	for _, e := range evs {
		out.Events = append(out.Events, apiconv.DealEventToProto(e, s.log))
	}
	return out, nil
}
