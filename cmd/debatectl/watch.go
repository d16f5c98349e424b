package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// excerptRunes is how much of a turn's text one watch line shows.
const excerptRunes = 100

// watchLine renders one ledger event for a person following a debate:
// who spoke in which round, their position and an excerpt, tool calls,
// gate verdicts, open human gates with the command that resolves them,
// and how the debate stopped. Bookkeeping events (node.started, …) are
// left out; it returns "" for them.
func watchLine(debateID string, e debate.Event) string {
	var p map[string]any
	_ = json.Unmarshal(e.Payload, &p)
	head := fmt.Sprintf("%5d ", e.Seq)
	if e.Round > 0 {
		head += fmt.Sprintf("r%-2d ", e.Round)
	} else {
		head += "    "
	}
	who := e.Actor
	switch e.Type {
	case "debate.started":
		return head + fmt.Sprintf("debate started: %s on deal %s", str(p, "protocol"), str(p, "deal_id"))
	case "node.started", "node.completed", "session_initialized":
		return ""
	case "node.retry":
		return head + fmt.Sprintf("%s: retrying after: %s", e.Node, excerpt(str(p, "error")))
	case "node.failed":
		return head + fmt.Sprintf("%s failed: %s", e.Node, excerpt(str(p, "error")))
	case "round.completed":
		return head + fmt.Sprintf("── round %d completed", e.Round)
	case "human_gate.created":
		gate := str(p, "gate_id")
		return head + fmt.Sprintf("HUMAN GATE OPEN %s: %s\n            the debate waits; resolve it with:\n            debatectl debate resolve %s %s --approve --reason '…'   (or --reject)",
			gate, str(p, "reason"), debateID, gate)
	case "human_gate.resolved":
		return head + fmt.Sprintf("human gate %s %s by %s: %s", str(p, "gate_id"), strings.ToLower(str(p, "status")), firstOf(str(p, "by")), str(p, "reason"))
	case "debate.stopped":
		line := fmt.Sprintf("debate stopped: %s, reason %s", strings.ToLower(str(p, "status")), firstOf(str(p, "reason")))
		if msg := str(p, "error"); msg != "" {
			line += ": " + excerpt(msg)
		}
		return head + line
	case "debate.aborted":
		line := fmt.Sprintf("debate cancelled by %s: %s", firstOf(str(p, "by")), firstOf(str(p, "reason")))
		if g := str(p, "cancelled_gate"); g != "" {
			line += fmt.Sprintf("; human gate %s cancelled", g)
		}
		return head + line
	case "agent.output":
		line := who
		if pos, ok := p["position"].(map[string]any); ok {
			line += fmt.Sprintf(" [%s, confidence %s]", str(pos, "recommendation"), number(pos["confidence"]))
		}
		return head + line + ": " + excerpt(str(p, "content"))
	case "agent.tool_call":
		return head + fmt.Sprintf("%s called %s → %s", firstOf(str(p, "agent_id"), who), str(p, "tool_name"), firstOf(str(p, "result_status")))
	case "muhasabah.rejected", "output.rejected", "transition.refused":
		return head + fmt.Sprintf("gate REJECTED %s's output: %s", firstOf(str(p, "agent_id"), str(p, "role"), who), violations(p))
	case "muhasabah.validated":
		return head + fmt.Sprintf("gate passed %s", firstOf(str(p, "agent_id"), who))
	case "stop.decision":
		if r := str(p, "stop_reason"); r != "" {
			return head + fmt.Sprintf("stop decision: stop (%s): %s", r, str(p, "why"))
		}
		return head + "stop decision: go on" + strings.TrimSuffix(": "+str(p, "why"), ": ")
	case "convergence.decision":
		return head + fmt.Sprintf("stop decision: %s", firstOf(str(p, "outcome"), str(p, "decision"), str(p, "reason"), compact(p)))
	case "debate.turn":
		var texts []string
		if turns, ok := p["turns"].([]any); ok {
			for _, t := range turns {
				if m, ok := t.(map[string]any); ok {
					texts = append(texts, str(m, "text"))
				}
			}
		}
		return head + fmt.Sprintf("%s (%d turn(s)): %s", firstOf(str(p, "speaker"), who), len(texts), excerpt(strings.Join(texts, " / ")))
	case "agent.message":
		return head + fmt.Sprintf("%s %s: %s", who, str(p, "kind"), excerpt(str(p, "text")))
	case "artifact.created":
		return head + fmt.Sprintf("artifact %s", str(p, "name"))
	case "deliverables.created":
		return head + "deliverables ready (debatectl debate deliverables " + debateID + ")"
	case "budget.exceeded":
		return head + "budget exceeded: " + compact(p)
	}
	text := firstOf(str(p, "content"), str(p, "text"), str(p, "summary"), str(p, "reason"), compact(p))
	return head + fmt.Sprintf("%s %s: %s", who, e.Type, excerpt(text))
}

// str is p[key] when it is a string, or "".
func str(p map[string]any, key string) string {
	s, _ := p[key].(string)
	return s
}

// number prints a JSON number exactly as small decimals read (0.72, not
// 7.2e-01), or "?" when there is none.
func number(v any) string {
	f, ok := v.(float64)
	if !ok {
		return "?"
	}
	return exactNumber(f)
}

// violations is a gate rejection's first violation and how many there are.
func violations(p map[string]any) string {
	vs, _ := p["violations"].([]any)
	if len(vs) == 0 {
		return firstOf(str(p, "reason"), str(p, "error"), compact(p))
	}
	first := fmt.Sprint(vs[0])
	if m, ok := vs[0].(map[string]any); ok {
		first = strings.TrimSpace(fmt.Sprintf("%s %s: %s", firstOf(str(m, "rule"), str(m, "Rule")), firstOf(str(m, "field"), str(m, "Field")), firstOf(str(m, "detail"), str(m, "Detail"))))
	}
	if len(vs) > 1 {
		return fmt.Sprintf("%d violations, first %s", len(vs), excerpt(first))
	}
	return excerpt(first)
}

// compact is the payload's top-level scalar members, for events this view
// does not know.
func compact(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k, v := range p {
		switch v.(type) {
		case string, float64, bool:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := p[k]
		if f, ok := v.(float64); ok {
			v = exactNumber(f)
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	return strings.Join(parts, " ")
}

// excerpt is the first line-worth of s: whitespace collapsed, cut at
// excerptRunes with an ellipsis.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= excerptRunes {
		return s
	}
	r := []rune(s)
	return string(r[:excerptRunes-1]) + "…"
}
