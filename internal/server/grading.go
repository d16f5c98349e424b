package server

import (
	"context"
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
// transaction.
func (s *Server) GradeDeal(ctx context.Context, req *debatedv1.GradeDealRequest) (*debatedv1.GradeDealResponse, error) {
	now := s.now().UTC()
	g, evs, err := s.grading.DealGrade(ctx, req.GetDealId(), now,
		func(b *debate.DealBundle, records []debate.Defect, prev *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
			next, upsert, events := sanad.Regrade(b, records, prev, now)
			return next, upsert, events, nil
		})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.GradeDealResponse{Grading: apiconv.DealGradingToProto(g, now)}
	for _, e := range evs {
		out.Events = append(out.Events, apiconv.DealEventToProto(e, s.log))
	}
	return out, nil
}

// actorOf names who acts: the caller's label if given, else its API key.
func actorOf(ctx context.Context, label string) string {
	if label != "" {
		return label
	}
	p, _ := debate.PrincipalFrom(ctx)
	return "key:" + p.KeyID
}

// FlagDefect implements RegistryService.
func (s *Server) FlagDefect(ctx context.Context, req *debatedv1.FlagDefectRequest) (*debatedv1.FlagDefectResponse, error) {
	now := s.now().UTC()
	params := sanad.FlagParams{
		ID:           "dfl_" + uuid.NewString(),
		ClaimID:      req.GetClaimId(),
		Type:         apiconv.DefectTypeFromProto(req.GetDefectType()),
		Severity:     apiconv.SeverityFromProto(req.GetSeverity()),
		CureProtocol: apiconv.CureFromProto(req.GetCureProtocol()),
		Description:  req.GetDescription(),
		EvidenceRefs: req.GetEvidenceRefs(),
		Actor:        actorOf(ctx, req.GetActor()),
	}
	var flagged debate.Defect
	g, _, err := s.grading.DealGrade(ctx, req.GetDealId(), now,
		func(b *debate.DealBundle, records []debate.Defect, prev *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
			d, ev, err := sanad.Flag(b, params, now)
			if err != nil {
				return nil, nil, nil, err
			}
			flagged = d
			next, upsert, events := sanad.Regrade(b, append(records, d), prev, now)
			return next, append(upsert, d), append([]debate.DealEvent{ev}, events...), nil
		})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.FlagDefectResponse{Defect: apiconv.DefectToProto(flagged), Grading: apiconv.DealGradingToProto(g, now)}, nil
}

// CureDefect implements RegistryService.
func (s *Server) CureDefect(ctx context.Context, req *debatedv1.CureDefectRequest) (*debatedv1.CureDefectResponse, error) {
	d, g, now, err := s.closeDefect(ctx, req.GetDealId(), req.GetDefectId(), debate.DefectCured, req.GetActor(), req.GetReason())
	if err != nil {
		return nil, err
	}
	return &debatedv1.CureDefectResponse{Defect: apiconv.DefectToProto(d), Grading: apiconv.DealGradingToProto(g, now)}, nil
}

// WaiveDefect implements RegistryService. Waiving accepts a defect without
// curing it, so it needs an API key with the admin scope.
func (s *Server) WaiveDefect(ctx context.Context, req *debatedv1.WaiveDefectRequest) (*debatedv1.WaiveDefectResponse, error) {
	if p, _ := debate.PrincipalFrom(ctx); !p.HasScope(debate.ScopeAdmin) {
		return nil, status.Error(codes.PermissionDenied, "waiving a defect needs an API key with the admin scope")
	}
	d, g, now, err := s.closeDefect(ctx, req.GetDealId(), req.GetDefectId(), debate.DefectWaived, req.GetActor(), req.GetReason())
	if err != nil {
		return nil, err
	}
	return &debatedv1.WaiveDefectResponse{Defect: apiconv.DefectToProto(d), Grading: apiconv.DealGradingToProto(g, now)}, nil
}

// closeDefect cures or waives a defect and re-grades, in one transaction. A
// deal never graded is graded first, so its detected defects have records.
func (s *Server) closeDefect(ctx context.Context, dealID, defectID string, st debate.DefectStatus, actor, reason string) (debate.Defect, *debate.DealGrading, time.Time, error) {
	now := s.now().UTC()
	var closed debate.Defect
	g, _, err := s.grading.DealGrade(ctx, dealID, now,
		func(b *debate.DealBundle, records []debate.Defect, prev *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
			current, up1, ev1 := sanad.Regrade(b, records, prev, now)
			all := append(append([]debate.Defect(nil), records...), up1...)
			d, ev, err := sanad.Close(all, defectID, st, actor, reason, now)
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
			events := append(append(ev1, ev), ev2...)
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

// GetGrading implements RegistryService: the last stored grading, read
// only (a GET must never write; grading again is GradeDeal).
func (s *Server) GetGrading(ctx context.Context, req *debatedv1.GetGradingRequest) (*debatedv1.GetGradingResponse, error) {
	g, at, err := s.grading.GradingGet(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.GetGradingResponse{Grading: apiconv.DealGradingToProto(g, at)}, nil
}
