package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/sanad"
)

// ValidateOutput implements DebateService: the debates' gates as a service.
func (ds *debateService) ValidateOutput(ctx context.Context, req *debatedv1.ValidateOutputRequest) (*debatedv1.ValidateOutputResponse, error) {
	s := ds.s
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
	records, err := s.grading.DefectList(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.ValidateOutputResponse{}
	o, err := gate.ParseOutput([]byte(req.GetOutputJson()), debate.IDISRoles)
	if err != nil {
		var ve *debate.ValidationError
		if !errors.As(err, &ve) {
			return nil, badRequest([]debate.FieldViolation{{Field: "output_json", Description: err.Error()}})
		}
		for _, v := range ve.Violations {
			out.Violations = append(out.Violations, &debatedv1.GateViolation{Rule: "SCHEMA", Field: v.Field, Detail: v.Description})
		}
		return out, nil
	}
	facts := gate.NewFacts(b, sanad.GradeWithOptions(b, sanad.Options{Records: records}))
	res := gate.Validate(o, facts, debate.IDISRoles)
	out.Valid = res.Valid
	for _, v := range res.Violations {
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

// GetDeliverables implements DebateService.
func (ds *debateService) GetDeliverables(ctx context.Context, req *debatedv1.GetDeliverablesRequest) (*debatedv1.GetDeliverablesResponse, error) {
	d, events, _, _, err := ds.ledgerOf(ctx, req.GetDebateId())
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	out := &debatedv1.GetDeliverablesResponse{}
	perRound := map[string]int{}
	isIDIS := d.Protocol == idis.Name
	for _, e := range events {
		switch {
		case e.Type == EventDeliverables:
			out.DeliverablesJson = string(e.Payload)
		case e.Type == EventArtifact:
			var a struct {
				Name    string          `json:"name"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(e.Payload, &a) != nil || a.Name == "" || len(a.Content) == 0 {
				continue
			}
			out.Artifacts = append(out.Artifacts, &debatedv1.Artifact{Name: a.Name, ContentJson: string(a.Content)})
		case isIDIS && e.Type == idis.EventAgentOutput:
			var o struct {
				Role  string `json:"role"`
				Round int    `json:"round_number"`
			}
			if json.Unmarshal(e.Payload, &o) != nil {
				continue
			}
			name := fmt.Sprintf("debate_round%d_%s", o.Round, o.Role)
			perRound[name]++
			if n := perRound[name]; n > 1 {
				name = fmt.Sprintf("%s_%d", name, n)
			}
			out.Artifacts = append(out.Artifacts, &debatedv1.Artifact{Name: name + ".json", ContentJson: string(e.Payload)})
		}
	}
	if out.DeliverablesJson == "" {
		return nil, toStatus(ctx, ds.s.log, fmt.Errorf("debate %s has no deliverables (status %s): %w", d.ID, d.Status, debate.ErrFailedPrecondition))
	}
	if isIDIS {
		out.Artifacts = append(out.Artifacts, &debatedv1.Artifact{Name: "debate_summary.json", ContentJson: out.DeliverablesJson})
		var dl idis.Deliverables
		if err := json.Unmarshal([]byte(out.DeliverablesJson), &dl); err == nil {
			out.Markdown = dl.Markdown()
		}
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
