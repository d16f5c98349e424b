package apiconv

import (
	"encoding/json"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"google.golang.org/protobuf/types/known/structpb"
)

// DebateStatusToProto converts a debate status.
func DebateStatusToProto(s debate.DebateStatus) debatedv1.DebateStatus {
	return debatedv1.DebateStatus(debatedv1.DebateStatus_value["DEBATE_STATUS_"+strings.ToUpper(string(s))])
}

// DebateStatusFromProto converts a status filter; unspecified is "".
func DebateStatusFromProto(s debatedv1.DebateStatus) debate.DebateStatus {
	return debate.DebateStatus(strings.ToLower(enumName("DEBATE_STATUS_", s.String())))
}

// DebateToProto converts a debate. Options that are not a JSON object (the
// service never stores such) are left out.
func DebateToProto(d debate.Debate) *debatedv1.Debate {
	out := &debatedv1.Debate{
		DebateId:        d.ID,
		DealId:          d.DealID,
		Protocol:        d.Protocol,
		IdempotencyKey:  d.IdempotencyKey,
		Status:          DebateStatusToProto(d.Status),
		StopReason:      d.StopReason,
		Error:           d.Error,
		Round:           int32(d.Round),
		RoundsCompleted: int32(d.RoundsCompleted),
		NextNode:        d.NextNode,
		LastSeq:         d.LastSeq,
		HeadHash:        d.HeadHash,
		CreateTime:      ts(d.CreatedAt),
		UpdateTime:      ts(d.UpdatedAt),
	}
	if len(d.Options) > 0 {
		var m map[string]any
		if json.Unmarshal(d.Options, &m) == nil {
			if s, err := structpb.NewStruct(m); err == nil {
				out.Options = s
			}
		}
	}
	return out
}

// EventToProto converts a ledger event. The payload travels as the exact
// canonical JSON that was hashed, so a client can verify as it reads.
func EventToProto(e debate.Event) *debatedv1.LedgerEvent {
	return &debatedv1.LedgerEvent{
		DebateId:    e.DebateID,
		Seq:         e.Seq,
		EventType:   e.Type,
		Actor:       e.Actor,
		Node:        e.Node,
		Round:       int32(e.Round),
		PayloadJson: string(e.Payload),
		Time:        ts(e.Time),
		PrevHash:    e.PrevHash,
		Hash:        e.Hash,
		KeyId:       e.KeyID,
		Signature:   e.Signature,
	}
}

// EventFromProto converts a streamed ledger event back, for clients that
// verify what they read. tenantID is the watcher's own tenant.
func EventFromProto(e *debatedv1.LedgerEvent, tenantID string) debate.Event {
	return debate.Event{
		DebateID:  e.GetDebateId(),
		TenantID:  tenantID,
		Seq:       e.GetSeq(),
		Type:      e.GetEventType(),
		Actor:     e.GetActor(),
		Node:      e.GetNode(),
		Round:     int(e.GetRound()),
		Payload:   json.RawMessage(e.GetPayloadJson()),
		Time:      fromTS(e.GetTime()),
		PrevHash:  e.GetPrevHash(),
		Hash:      e.GetHash(),
		KeyID:     e.GetKeyId(),
		Signature: e.GetSignature(),
	}
}

// GateToProto converts a human gate.
func GateToProto(g debate.HumanGate) *debatedv1.HumanGate {
	out := &debatedv1.HumanGate{
		GateId:     g.ID,
		Node:       g.Node,
		Reason:     g.Reason,
		ClaimIds:   g.ClaimIDs,
		Status:     string(g.Status),
		Resolution: g.Resolution,
		ResolvedBy: g.ResolvedBy,
		CreateTime: ts(g.CreatedAt),
	}
	if g.ResolvedAt != nil {
		out.ResolveTime = ts(*g.ResolvedAt)
	}
	return out
}

// WatchEvents returns the events of one WatchDebate message in seq order:
// its batch (events) when it carries one, else its single event. The
// message's status is the debate's as of the last of them.
func WatchEvents(m *debatedv1.WatchDebateResponse) []*debatedv1.LedgerEvent {
	if evs := m.GetEvents(); len(evs) > 0 {
		return evs
	}
	if e := m.GetEvent(); e != nil {
		return []*debatedv1.LedgerEvent{e}
	}
	return nil
}
