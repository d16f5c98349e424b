package server

import (
	"context"
	"encoding/json"
	"fmt"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ValidateOutput implements DebateService: the debates' gates as a service,
// those of the protocol named by Debates.Outputs.
func (ds *debateService) ValidateOutput(ctx context.Context, req *debatedv1.ValidateOutputRequest) (*debatedv1.ValidateOutputResponse, error) {
	s := ds.s
	p, err := ds.Protocols.Get(ds.Outputs)
	if err != nil || p.CheckOutput == nil {
		return nil, status.Error(codes.Unimplemented, "this server checks no agent outputs")
	}
	// It grades the whole deal in memory, as GradeDeal does: the same bounds.
	release, err := s.gradingSlot(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	defer release()
	b, err := s.registry.DealBundleGet(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	defects, err := s.grading.DefectList(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	vs, err := p.CheckOutput(b, defects, []byte(req.GetOutputJson()))
	if err != nil {
		return nil, badRequest([]debate.FieldViolation{{Field: "output_json", Description: err.Error()}})
	}
	out := &debatedv1.ValidateOutputResponse{Valid: len(vs) == 0}
	for _, v := range vs {
		out.Violations = append(out.Violations, &debatedv1.GateViolation{Rule: v.Rule, Field: v.Field, Detail: v.Detail})
	}
	return out, nil
}

// Event types GetDeliverables reads, in any protocol: an artifact.created
// payload is {"name": FILE, "content": OBJECT}; the last
// deliverables.created payload is the debate's deliverables, whose
// top-level "markdown" string, if any, is their Markdown rendering.
const (
	EventArtifact     = "artifact.created"
	EventDeliverables = "deliverables.created"
)

// GetDeliverables implements DebateService. The protocol's Deliverables
// hook adds its own artifacts and renders the Markdown.
func (ds *debateService) GetDeliverables(ctx context.Context, req *debatedv1.GetDeliverablesRequest) (*debatedv1.GetDeliverablesResponse, error) {
	d, events, _, _, err := ds.ledgerOf(ctx, req.GetDebateId())
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	out := &debatedv1.GetDeliverablesResponse{}
	for _, e := range events {
		switch e.Type {
		case EventDeliverables:
			out.DeliverablesJson = string(e.Payload)
		case EventArtifact:
			var a struct {
				Name    string          `json:"name"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(e.Payload, &a) != nil || a.Name == "" || len(a.Content) == 0 {
				continue
			}
			out.Artifacts = append(out.Artifacts, &debatedv1.Artifact{Name: a.Name, ContentJson: string(a.Content)})
		}
	}
	if out.DeliverablesJson == "" {
		return nil, toStatus(ctx, ds.s.log, fmt.Errorf("debate %s has no deliverables (status %s): %w", d.ID, d.Status, debate.ErrFailedPrecondition))
	}
	if p, err := ds.Protocols.Resolve(ctx, d.TenantID, d.Protocol); err == nil && p.Deliverables != nil {
		arts, md := p.Deliverables(events, json.RawMessage(out.DeliverablesJson))
		for _, a := range arts {
			out.Artifacts = append(out.Artifacts, &debatedv1.Artifact{Name: a.Name, ContentJson: string(a.Content)})
		}
		out.Markdown = md
	} else {
		var md struct {
			Markdown string `json:"markdown"`
		}
		if err := json.Unmarshal([]byte(out.DeliverablesJson), &md); err == nil {
			out.Markdown = md.Markdown
		}
	}
	if out.Verification, err = ds.VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: d.ID}); err != nil {
		return nil, err
	}
	return out, nil
}
