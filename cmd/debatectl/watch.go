package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// excerptRunes is how much of a turn's text one watch line shows.
const excerptRunes = 100

// watchIndent starts the continuation lines of an event that takes more than
// one line (the turns of a debate.turn, an open gate's command): past the
// seq and round columns of the first.
const watchIndent = "          "

// watchLine renders one ledger event for a person following a debate:
// who spoke in which round, their position and an excerpt, tool calls,
// gate verdicts, open human gates with the command that resolves them,
// and how the debate stopped. Bookkeeping events (node.started, …) are
// left out; it returns "" for them. Every protocol's events are known
// (synthetic, IDIS, legal, StratMaster, the agent protocol and the
// protocols tenants register); an event type it does not know is one
// line with its type and role. It never prints a payload as JSON.
func watchLine(debateID string, e debate.Event) string {
	var p payload
	_ = json.Unmarshal(e.Payload, &p) // a payload that is no object renders as an empty one
	body := eventBody(debateID, e, p)
	if body == "" {
		return ""
	}
	head := fmt.Sprintf("%5d ", e.Seq)
	if e.Round > 0 {
		head += fmt.Sprintf("r%-2d ", e.Round)
	} else {
		head += "    "
	}
	// A model's text, or a name, must not drive the terminal: control
	// characters are dropped, but for the line breaks of the view's own
	// continuation lines.
	return strings.Map(func(r rune) rune {
		if r != '\n' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, head+body)
}

// eventBody is watchLine without its seq and round columns.
func eventBody(debateID string, e debate.Event, p payload) string {
	for _, table := range eventTables {
		if render, ok := table[e.Type]; ok {
			return render(debateID, e, p)
		}
	}
	line := fmt.Sprintf("%s %s", firstOf(e.Actor), e.Type)
	if text := p.str("content", "text", "summary", "reason", "detail"); text != "" {
		line += ": " + excerpt(text)
	}
	return line
}

// eventTables are the renderers of every event type the view knows.
var eventTables = []map[string]renderer{engineEvents, sharedEvents, idisEvents, legalEvents, stratmasterEvents, agentEvents, customEvents}

// knownEvent reports whether the view has a renderer of its own for typ.
func knownEvent(typ string) bool {
	for _, table := range eventTables {
		if _, ok := table[typ]; ok {
			return true
		}
	}
	return false
}

// renderer renders the body of one type of event.
type renderer func(debateID string, e debate.Event, p payload) string

// engineEvents are the engine's own events, the same in every protocol.
var engineEvents = map[string]renderer{
	"debate.started": func(_ string, _ debate.Event, p payload) string {
		return fmt.Sprintf("debate started: %s on deal %s", p.str("protocol"), p.str("deal_id"))
	},
	"node.started":   silent,
	"node.completed": silent,
	"node.retry": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s: retrying after: %s", e.Node, excerpt(p.str("error")))
	},
	"node.failed": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s failed: %s", e.Node, excerpt(p.str("error")))
	},
	"round.completed": func(_ string, e debate.Event, _ payload) string {
		return fmt.Sprintf("── round %d completed", e.Round)
	},
	"human_gate.created": func(debateID string, _ debate.Event, p payload) string {
		gate := p.str("gate_id")
		return fmt.Sprintf("HUMAN GATE OPEN %s: %s\n%s  the debate waits; resolve it with:\n%s  %s",
			gate, p.str("reason"), watchIndent, watchIndent, resolveLine(debateID, gate))
	},
	"human_gate.resolved": func(_ string, _ debate.Event, p payload) string {
		return fmt.Sprintf("human gate %s %s by %s: %s", p.str("gate_id"), strings.ToLower(p.str("status")), firstOf(p.str("by")), p.str("reason"))
	},
	"debate.stopped": func(_ string, _ debate.Event, p payload) string {
		line := fmt.Sprintf("debate stopped: %s, reason %s", strings.ToLower(p.str("status")), firstOf(p.str("reason")))
		if msg := p.str("error"); msg != "" {
			line += ": " + excerpt(msg)
		}
		return line
	},
	"debate.aborted": func(_ string, _ debate.Event, p payload) string {
		line := fmt.Sprintf("debate cancelled by %s: %s", firstOf(p.str("by")), firstOf(p.str("reason")))
		if g := p.str("cancelled_gate"); g != "" {
			line += fmt.Sprintf("; human gate %s cancelled", g)
		}
		return line
	},
}

// sharedEvents are the events several protocols emit, with the payloads
// of each.
var sharedEvents = map[string]renderer{
	"agent.tool_call":  func(_ string, e debate.Event, p payload) string { return toolCall(e, p) },
	"artifact.created": func(_ string, e debate.Event, p payload) string { return artifact(e, p) },
	"output.rejected":  func(_ string, e debate.Event, p payload) string { return rejected(e, p) },
	"stop.decision":    func(_ string, _ debate.Event, p payload) string { return stopDecision(p) },
	"budget.exceeded":  func(_ string, e debate.Event, p payload) string { return budgetExceeded(e, p) },
	"deliverables.created": func(debateID string, _ debate.Event, _ payload) string {
		return "deliverables ready (debatectl debate deliverables " + debateID + ")"
	},
	"agent.message": func(_ string, e debate.Event, p payload) string { // synthetic.v1
		return fmt.Sprintf("%s %s", e.Actor, p.str("kind")) + strings.TrimSuffix(": "+excerpt(p.str("text")), ": ")
	},
}

// silent leaves an event out of the view.
func silent(string, debate.Event, payload) string { return "" }

// resolveLine is the command that resolves an open human gate.
func resolveLine(debateID, gate string) string {
	return fmt.Sprintf("debatectl debate resolve %s %s --approve --reason '…'   (or --reject)", debateID, gate)
}

// toolCall is a tool call's audit record (tools.Audit), in every protocol
// whose roles call tools: who called what with which arguments, and the
// result status, with the rule that refused it.
func toolCall(e debate.Event, p payload) string {
	status := firstOf(p.str("result_status"))
	if rule := p.str("rule"); rule != "" {
		status += " (" + rule + ")"
	}
	line := fmt.Sprintf("%s called %s → %s", firstOf(p.str("agent_id"), e.Actor), p.str("tool_name"), status)
	if args := scalars(p.obj("tool_args"), 90); args != "" {
		line += "  " + args
	}
	return line
}

// artifact is an artifact.created event: the legal protocol's answers,
// critiques and summary are rendered as such, other artifacts by name.
func artifact(e debate.Event, p payload) string {
	c := p.obj("content")
	switch {
	case c.has("answer") && c.has("claims"):
		return legalAnswer(e, c)
	case c.has("critiques") && c.has("target"):
		return legalCritiques(e, c)
	case c.has("agreed_claims") && c.has("conflicts"):
		return legalSummary(c)
	}
	return "artifact " + p.str("name")
}

// rejected is a gate's rejection of a role's output (output.rejected of
// every protocol, IDIS's muhasabah.rejected): whose output, and why.
func rejected(e debate.Event, p payload) string {
	who := firstOf(p.str("agent_id", "role", "agent"), e.Actor)
	what := "output"
	if k := p.str("kind", "schema"); k != "" {
		what = k + " output"
	}
	return fmt.Sprintf("gate REJECTED %s's %s: %s", who, what, violations(p))
}

// stopDecision is a stop rule's check at the end of a round: IDIS names
// the rule in stop_reason, a registered protocol says stop and reason.
func stopDecision(p payload) string {
	reason := p.str("stop_reason")
	if reason == "" && p.bool("stop") {
		reason = p.str("reason")
	}
	why := strings.TrimSuffix(": "+excerpt(p.str("why")), ": ")
	if reason != "" {
		return fmt.Sprintf("stop decision: stop (%s)%s", reason, why)
	}
	return "stop decision: go on" + why
}

// budgetExceeded is a spent model token budget, which stops the debate:
// whose turn it stopped, the tokens used of the budget when the payload
// has them, and the backend's words.
func budgetExceeded(e debate.Event, p payload) string {
	line := fmt.Sprintf("BUDGET EXCEEDED at %s's turn: the model token budget is spent", firstOf(p.str("agent_id", "role"), e.Actor))
	if used, ok := p.num("tokens"); ok {
		line += " (" + exactNumber(used)
		if limit, ok := p.num("budget"); ok {
			line += " of " + exactNumber(limit)
		}
		line += " tokens)"
	}
	if d := p.str("detail"); d != "" {
		line += ": " + excerpt(d)
	}
	return line
}

// payload is an event's payload as JSON decodes it.
type payload map[string]any

// str is the first of keys whose member is a non-empty string, or "".
func (p payload) str(keys ...string) string {
	for _, k := range keys {
		if s, _ := p[k].(string); s != "" {
			return s
		}
	}
	return ""
}

// num is key's member when it is a number.
func (p payload) num(key string) (float64, bool) {
	f, ok := p[key].(float64)
	return f, ok
}

// bool is key's member when it is true.
func (p payload) bool(key string) bool {
	b, _ := p[key].(bool)
	return b
}

// obj is key's member when it is an object, or an empty payload.
func (p payload) obj(key string) payload {
	m, _ := p[key].(map[string]any)
	return m
}

// list is key's member when it is an array.
func (p payload) list(key string) []any {
	l, _ := p[key].([]any)
	return l
}

// objs is key's member's objects, when it is an array.
func (p payload) objs(key string) []payload {
	var out []payload
	for _, v := range p.list(key) {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// has reports whether key is a member.
func (p payload) has(key string) bool {
	_, ok := p[key]
	return ok
}

// violations is a gate rejection's first violation and how many there are.
func violations(p payload) string {
	vs := p.list("violations")
	if len(vs) == 0 {
		return firstOf(p.str("reason", "error", "detail"))
	}
	first := fmt.Sprint(vs[0])
	if m, ok := vs[0].(map[string]any); ok {
		v := payload(m)
		first = strings.TrimSpace(fmt.Sprintf("%s %s: %s", v.str("rule", "Rule"), v.str("field", "Field"), v.str("detail", "Detail")))
	}
	if len(vs) > 1 {
		return fmt.Sprintf("%d violations, first %s", len(vs), excerpt(first))
	}
	return excerpt(first)
}

// scalars is an object's scalar members as k=v, in key order, each value
// cut to a few words and the whole to at most limit runes: a tool call's
// arguments at a glance.
func scalars(p payload, limit int) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := p[k].(type) {
		case string:
			v = cut(x, 36)
			if strings.ContainsAny(v, " =") {
				v = fmt.Sprintf("%q", v)
			}
		case float64:
			v = exactNumber(x)
		case bool:
			v = fmt.Sprint(x)
		case []any:
			if len(x) == 1 {
				if s, ok := x[0].(string); ok {
					v = "[" + cut(s, 36) + "]"
					break
				}
			}
			v = fmt.Sprintf("[%d]", len(x))
		default:
			continue
		}
		parts = append(parts, k+"="+v)
	}
	return cut(strings.Join(parts, " "), limit)
}

// excerpt is the first line-worth of s: whitespace collapsed, cut at
// excerptRunes with an ellipsis.
func excerpt(s string) string {
	return cut(s, excerptRunes)
}

// cut is s with its whitespace collapsed, cut at n runes with an ellipsis.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// plural is "1 one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// enumLike matches the values of a closed set (PASS, INVEST_WITH_CONDITIONS).
var enumLike = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
