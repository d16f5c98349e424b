package apiconv

import (
	"log/slog"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"google.golang.org/protobuf/types/known/structpb"
)

func gradeToProto(g debate.Grade) debatedv1.Grade {
	return debatedv1.Grade(debatedv1.Grade_value["GRADE_"+string(g)])
}

// DefectToProto converts a defect record.
func DefectToProto(d debate.Defect) *debatedv1.Defect {
	return &debatedv1.Defect{
		DefectId:     d.ID,
		DealId:       d.DealID,
		ClaimId:      d.ClaimID,
		ClaimKey:     d.ClaimKey,
		DefectType:   debatedv1.DefectType(debatedv1.DefectType_value["DEFECT_TYPE_"+string(d.Type)]),
		Severity:     debatedv1.DefectSeverity(debatedv1.DefectSeverity_value["DEFECT_SEVERITY_"+string(d.Severity)]),
		CureProtocol: debatedv1.CureProtocol(debatedv1.CureProtocol_value["CURE_PROTOCOL_"+string(d.CureProtocol)]),
		Status:       debatedv1.DefectStatus(debatedv1.DefectStatus_value["DEFECT_STATUS_"+string(d.Status)]),
		Origin:       debatedv1.DefectOrigin(debatedv1.DefectOrigin_value["DEFECT_ORIGIN_"+string(d.Origin)]),
		Description:  d.Description,
		EvidenceRefs: d.EvidenceRefs,
		Actor:        d.Actor,
		Reason:       d.Reason,
		CreateTime:   ts(d.CreatedAt),
		UpdateTime:   ts(d.UpdatedAt),
	}
}

func stepsToProto(steps []debate.Step) []*debatedv1.ExplanationStep {
	out := make([]*debatedv1.ExplanationStep, 0, len(steps))
	for _, s := range steps {
		out = append(out, &debatedv1.ExplanationStep{Rule: s.Rule, Text: s.Text})
	}
	return out
}

// DealGradingSummaryToProto converts the figures of a deal's grading (the
// head of the truth dashboard), graded at at.
func DealGradingSummaryToProto(g *debate.DealGrading, at time.Time) *debatedv1.DealGradingSummary {
	return &debatedv1.DealGradingSummary{
		DealId:            g.DealID,
		ClaimCount:        int32(len(g.Claims)),
		GradeDCount:       int32(g.GradeDCount),
		SanadCoverage:     g.SanadCoverage,
		BlockedClaimCount: int32(len(g.BlockedClaimKeys)),
		OpenDefectCount:   int32(len(g.Defects)),
		CalcCount:         int32(len(g.Calcs)),
		GradeTime:         ts(at),
	}
}

// ClaimGradeToProto converts one claim's row of the dashboard.
func ClaimGradeToProto(c debate.ClaimGrade) *debatedv1.ClaimGrading {
	pc := &debatedv1.ClaimGrading{
		ClaimId:             c.ClaimID,
		ClaimKey:            c.ClaimKey,
		Metric:              c.Metric,
		BaseGrade:           gradeToProto(c.BaseGrade),
		Grade:               gradeToProto(c.Grade),
		Verdict:             debatedv1.Verdict(debatedv1.Verdict_value["VERDICT_"+string(c.Verdict)]),
		Action:              debatedv1.Action(debatedv1.Action_value["ACTION_"+string(c.Action)]),
		CorroborationStatus: debatedv1.CorroborationStatus(debatedv1.CorroborationStatus_value["CORROBORATION_STATUS_"+string(c.Corroboration)]),
		IndependentCount:    int32(c.IndependentCount),
		Blocked:             c.Blocked,
		Explanation:         stepsToProto(c.Steps),
	}
	for _, d := range c.Defects {
		pc.Defects = append(pc.Defects, DefectToProto(d))
	}
	return pc
}

// CalcResultToProto converts one calc's row of the dashboard.
func CalcResultToProto(c debate.CalcResult) *debatedv1.CalcGrading {
	return &debatedv1.CalcGrading{
		CalcId:      c.CalcID,
		CalcType:    debatedv1.CalcType(debatedv1.CalcType_value["CALC_TYPE_"+string(c.Type)]),
		Grade:       gradeToProto(c.Grade),
		Output:      outputTexts(c.Output),
		Explanation: stepsToProto(c.Steps),
	}
}

// DealEventToProto converts a deal event. A payload that is not
// representable as a protobuf Struct (it always is for the payloads the
// service writes) is dropped with a log line rather than failing the call.
func DealEventToProto(e debate.DealEvent, log *slog.Logger) *debatedv1.DealEvent {
	out := &debatedv1.DealEvent{
		Seq:        e.Seq,
		DealId:     e.DealID,
		EventType:  e.Type,
		Actor:      e.Actor,
		CreateTime: ts(e.CreatedAt),
	}
	if e.Payload != nil {
		p, err := structpb.NewStruct(e.Payload)
		if err != nil {
			log.Warn("deal event payload not representable", slog.Int64("seq", e.Seq), slog.String("error", err.Error()))
		}
		out.Payload = p
	}
	return out
}

// DefectTypeFromProto converts a defect type; unspecified is "".
func DefectTypeFromProto(t debatedv1.DefectType) debate.DefectType {
	return debate.DefectType(enumName("DEFECT_TYPE_", t.String()))
}

// SeverityFromProto converts a severity; unspecified is "".
func SeverityFromProto(s debatedv1.DefectSeverity) debate.Severity {
	return debate.Severity(enumName("DEFECT_SEVERITY_", s.String()))
}

// CureFromProto converts a cure protocol; unspecified is "".
func CureFromProto(c debatedv1.CureProtocol) debate.CureProtocol {
	return debate.CureProtocol(enumName("CURE_PROTOCOL_", c.String()))
}

// outputTexts is the wire form of a calc's recomputed output: each value as
// the shortest decimal that reads back as it. The grader rounds outputs
// half-up to their precision (2 decimals for gross margin, 1 for runway), so
// this is the rounded decimal, e.g. "68.5". A value that is not finite
// (the grader never records one) is left out.
func outputTexts(m map[string]float64) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, f := range m {
		if d, err := debate.DecimalFromFloat(f); err == nil {
			out[k] = d.String()
		}
	}
	return out
}
