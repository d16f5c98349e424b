package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// The renderers of each protocol's own events. The event types are the
// wire's strings, not the protocol packages' constants: the command line
// client does not link the server's protocols, and TestWatchKnowsEveryEvent
// fails when a protocol adds a type this file does not render.

// idisEvents are IDIS's (idis.vc.v1) events.
var idisEvents = map[string]renderer{
	"agent.output": func(_ string, e debate.Event, p payload) string {
		line := e.Actor
		if pos := p.obj("position"); len(pos) > 0 {
			line += fmt.Sprintf(" [%s, confidence %s]", pos.str("recommendation"), confidenceOf(pos))
		}
		return line + ": " + excerpt(p.str("content"))
	},
	"muhasabah.rejected": func(_ string, e debate.Event, p payload) string { return rejected(e, p) },
	"muhasabah.validated": func(_ string, e debate.Event, p payload) string {
		if checked, ok := p.num("outputs_checked"); ok {
			accepted, _ := p.num("accepted")
			return fmt.Sprintf("gate re-check: %s of %s outputs accepted", exactNumber(accepted), exactNumber(checked))
		}
		return "gate passed " + firstOf(p.str("agent_id"), e.Actor)
	},
	"defect.flagged": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s flags defect %s (%s) on %s: %s", firstOf(e.Actor), firstOf(p.str("Type", "defect_type")),
			strings.ToLower(firstOf(p.str("Severity", "severity"))), firstOf(p.str("ClaimKey", "claim_key", "ClaimID", "claim_id")),
			excerpt(p.str("Description", "description")))
	},
	"human_review.requested": func(_ string, e debate.Event, p payload) string {
		line := fmt.Sprintf("%s asks for a human review of %s", firstOf(e.Actor), plural(len(p.list("claim_ids")), "claim", "claims"))
		if pr := p.str("priority"); pr != "" {
			line += " (priority " + pr + ")"
		}
		return line + ": " + excerpt(p.str("reason"))
	},
	"evidence.retrieved": func(_ string, _ debate.Event, p payload) string {
		return fmt.Sprintf("evidence retrieved: %s, %s", plural(len(p.list("searches")), "search", "searches"),
			plural(len(p.list("new_evidence")), "new item", "new items"))
	},
}

// legalEvents are the legal protocol's (legal.adat.v1) events other than
// its artifacts (artifact renders those).
var legalEvents = map[string]renderer{
	"convergence.decision": func(_ string, _ debate.Event, p payload) string {
		critical, _ := p.num("critical")
		major, _ := p.num("major")
		open, _ := p.num("unresolved_conflicts")
		line := fmt.Sprintf("convergence check: %s: %s critical, %s major, %s", firstOf(p.str("outcome")),
			exactNumber(critical), exactNumber(major), plural(int(open), "unresolved conflict", "unresolved conflicts"))
		if held := strs(p.list("convergence_criteria")); len(held) > 0 {
			line += "; criteria held: " + strings.Join(held, ", ")
		}
		if esc := strs(p.list("escalation_rules")); len(esc) > 0 {
			line += "; escalation: " + strings.Join(esc, ", ")
		}
		if p.bool("needs_human_review") {
			line += "; NEEDS HUMAN REVIEW"
		}
		return line
	},
	"supervisor.synthesis": func(_ string, e debate.Event, p payload) string {
		s := p.obj("synthesis")
		line := fmt.Sprintf("%s synthesis [%s agreed, %s disputed", firstOf(e.Actor),
			plural(len(s.list("agreed_claims")), "claim", "claims"), fmt.Sprint(len(s.list("disputed_claims"))))
		if s.bool("needs_human_review") {
			line += ", NEEDS HUMAN REVIEW"
		}
		return line + "]: " + excerpt(s.str("answer"))
	},
}

// legalAnswer is a legal agent's answer or revision (an artifact): its
// claims, their confidence and an excerpt.
func legalAnswer(e debate.Event, c payload) string {
	what := "answer"
	if strings.Contains(e.Node, "revision") {
		what = "revision"
	}
	claims := c.objs("claims")
	line := fmt.Sprintf("%s %s [%s", firstOf(c.str("agent"), e.Actor), what, plural(len(claims), "claim", "claims"))
	if r := confidenceRange(claims); r != "" {
		line += ", confidence " + r
	}
	return line + "]: " + excerpt(c.str("answer"))
}

// legalCritiques is a legal agent's critiques of the other's output.
func legalCritiques(e debate.Event, c payload) string {
	ks := c.objs("critiques")
	line := fmt.Sprintf("%s critiques %s: ", firstOf(c.str("agent"), e.Actor), c.str("target"))
	if len(ks) == 0 {
		return line + "no critique"
	}
	count := map[string]int{}
	for _, k := range ks {
		count[k.str("severity")]++
	}
	var sev []string
	for _, s := range []string{"CRITICAL", "MAJOR", "MINOR"} {
		if count[s] > 0 {
			sev = append(sev, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	return line + fmt.Sprintf("%s (%s); %s: %s", plural(len(ks), "critique", "critiques"), strings.Join(sev, ", "),
		firstOf(ks[0].str("issue_type")), excerpt(ks[0].str("description")))
}

// legalSummary is the legal debate's summary (an artifact).
func legalSummary(c payload) string {
	open := 0
	for _, k := range c.objs("conflicts") {
		if !k.bool("resolved") {
			open++
		}
	}
	return fmt.Sprintf("debate summary: %s agreed, %d disputed; %s, %d unresolved",
		plural(len(c.list("agreed_claims")), "claim", "claims"), len(c.list("disputed_claims")),
		plural(len(c.list("conflicts")), "conflict", "conflicts"), open)
}

// stratmasterEvents are StratMaster's (stratmaster.v1) events.
var stratmasterEvents = map[string]renderer{
	"task.status": func(_ string, _ debate.Event, p payload) string {
		pass, _ := p.num("pass")
		attempt, _ := p.num("attempt")
		line := fmt.Sprintf("task %s (pass %s", strings.ReplaceAll(firstOf(p.str("status")), "_", " "), exactNumber(pass))
		if attempt > 1 {
			line += ", attempt " + exactNumber(attempt)
		}
		return line + "): " + excerpt(p.str("detail"))
	},
	"research.planned": func(_ string, e debate.Event, p payload) string {
		plan := p.obj("plan")
		pass, _ := p.num("pass")
		return fmt.Sprintf("%s plans pass %s: %s, %s: %s", firstOf(e.Actor), exactNumber(pass),
			plural(len(plan.list("searches")), "search", "searches"), plural(len(plan.list("lookups")), "lookup", "lookups"),
			excerpt(plan.str("rationale")))
	},
	"evidence.collected": func(_ string, e debate.Event, p payload) string {
		total, _ := p.num("total")
		return fmt.Sprintf("%s collected %s (%s in all)", firstOf(e.Actor),
			plural(len(p.list("new_evidence_ids")), "new evidence item", "new evidence items"), exactNumber(total))
	},
	"hypotheses.proposed": func(_ string, e debate.Event, p payload) string {
		hs := p.objs("hypotheses")
		line := fmt.Sprintf("%s proposes %s", firstOf(e.Actor), plural(len(hs), "hypothesis", "hypotheses"))
		if r := confidenceRange(hs); r != "" {
			line += ", confidence " + r
		}
		if reasons := strs(p.list("debate_reasons")); p.bool("debate_required") && len(reasons) > 0 {
			line += "; to debate: " + reasons[0]
			if len(reasons) > 1 {
				line += fmt.Sprintf(" (+%d more)", len(reasons)-1)
			}
		}
		return line
	},
	"debate.turn": func(_ string, e debate.Event, p payload) string {
		turns := p.objs("turns")
		lines := []string{fmt.Sprintf("%s (%s):", firstOf(p.str("speaker"), e.Actor), plural(len(turns), "turn", "turns"))}
		for _, t := range turns {
			lines = append(lines, fmt.Sprintf("%s  %s %s: %s", watchIndent, t.str("kind"), t.str("hypothesis_id"), excerpt(t.str("text"))))
		}
		return strings.Join(lines, "\n")
	},
	"plan.drafted": func(_ string, e debate.Event, p payload) string {
		plan := p.obj("plan")
		return fmt.Sprintf("%s drafts the plan [%s, %s]: %s", firstOf(e.Actor),
			plural(len(plan.list("recommendations")), "recommendation", "recommendations"),
			plural(len(plan.list("risks")), "risk", "risks"), excerpt(plan.str("summary")))
	},
	"constitution.reviewed": func(_ string, _ debate.Event, p payload) string {
		pass, _ := p.num("pass")
		line := fmt.Sprintf("gate constitution %s v%s, pass %s: ", p.str("constitution_id"), p.str("constitution_version"), exactNumber(pass))
		if p.bool("passed") {
			return line + "PASSED"
		}
		var failed []string
		finding := ""
		for _, pr := range p.objs("principles") {
			if !pr.bool("passed") {
				failed = append(failed, pr.str("principle_id"))
				if fs := strs(pr.list("findings")); finding == "" && len(fs) > 0 {
					finding = fs[0]
				}
			}
		}
		for _, m := range p.objs("metrics") {
			if !m.bool("passed") {
				failed = append(failed, m.str("name"))
			}
		}
		line += "FAILED " + strings.Join(failed, ", ")
		if finding != "" {
			line += ": " + excerpt(finding)
		}
		return line
	},
	"task.revision_requested": func(_ string, e debate.Event, p payload) string {
		rev, _ := p.num("revision")
		most, _ := p.num("max_revisions")
		line := fmt.Sprintf("%s sends the task back for revision %s of %s", firstOf(e.Actor), exactNumber(rev), exactNumber(most))
		if failed := strs(p.list("failed")); len(failed) > 0 {
			line += "; failed " + strings.Join(failed, ", ")
		}
		if fb := p.objs("feedback"); len(fb) > 0 {
			line += ": " + excerpt(fb[0].str("detail"))
		}
		return line
	},
}

// agentEvents are the agent protocol's (agent.protocol.v1) events: the
// session's lifecycle, proposals, signed and vetted intents, executions,
// claims and the audit.
var agentEvents = map[string]renderer{
	"session_initialized": func(_ string, _ debate.Event, p payload) string {
		steps, _ := p.num("steps")
		return fmt.Sprintf("session opened: %s, %s with %s", excerpt(p.str("objective")),
			plural(int(steps), "step", "steps"), strings.Join(strs(p.list("tools")), ", "))
	},
	"session.transition": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("session %s → %s (%s)", p.str("from"), p.str("to"), firstOf(e.Actor))
	},
	"transition.refused": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("transition REFUSED: %s → %s requested by %s: %s", p.str("from"), p.str("to"),
			firstOf(p.str("requested_by"), e.Actor), excerpt(p.str("reason")))
	},
	"proposal_created": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s proposes %s [risk %s]: %s", firstOf(e.Actor), p.str("proposal_id"), firstOf(p.str("risk_class")), excerpt(p.str("objective")))
	},
	"proposal_reviewed": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s reviews %s: %s: %s", firstOf(e.Actor), p.str("proposal_id"),
			strings.ReplaceAll(firstOf(p.str("status")), "_", " "), excerpt(p.str("reason")))
	},
	"tool_intent_signed": func(_ string, e debate.Event, p payload) string {
		attempt, _ := p.num("attempt")
		return fmt.Sprintf("%s signs intent %s: %s [risk %s, attempt %s]", firstOf(e.Actor), p.str("intent_id"), p.str("tool"),
			firstOf(p.str("risk_class")), exactNumber(attempt))
	},
	"tool_intent_approved": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s approves intent %s: %s", firstOf(e.Actor), p.str("intent_id"), excerpt(p.str("reason")))
	},
	"tool_intent_blocked": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s BLOCKS intent %s: %s", firstOf(e.Actor), p.str("intent_id"), excerpt(p.str("reason")))
	},
	"tool_execution_started": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s runs %s (execution %s)", firstOf(e.Actor), p.str("tool"), p.str("execution_id"))
	},
	"tool_execution_completed": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s: %s returned %s", firstOf(e.Actor), p.str("tool"), excerpt(p.str("result_text")))
	},
	"tool_execution_failed": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s: %s FAILED: %s", firstOf(e.Actor), p.str("tool"), excerpt(p.str("error")))
	},
	"claim_issued": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s claims %s [confidence %s]: %s", firstOf(e.Actor), p.str("claim_id"), confidenceOf(p), excerpt(p.str("text")))
	},
	"claim_challenged": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("claim %s CHALLENGED by %s: %s", p.str("claim_id"), firstOf(e.Actor), excerpt(p.str("reason")))
	},
	"verification_run_started": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s starts the verification run: the trace so far checks %s%s", firstOf(e.Actor),
			firstOf(p.str("pre_final_status")), problems(p.list("problems"), p.list("warnings")))
	},
	"verification_run_completed": func(_ string, e debate.Event, p payload) string {
		through, _ := p.num("checked_through_seq")
		return fmt.Sprintf("%s verification: %s through seq %s%s", firstOf(e.Actor), strings.ToUpper(firstOf(p.str("status"))),
			exactNumber(through), problems(p.obj("report").list("problems"), p.obj("report").list("warnings")))
	},
	"final_statement_signed": func(_ string, e debate.Event, p payload) string {
		return fmt.Sprintf("%s signs the final statement: %s for %s", firstOf(e.Actor),
			plural(len(p.list("claims")), "claim", "claims"), excerpt(p.str("objective")))
	},
}

// problems is a verification's problems and warnings, the first of each
// and their count, after "; ".
func problems(ps, warnings []any) string {
	var out string
	if len(ps) > 0 {
		first := fmt.Sprint(ps[0])
		if m, ok := ps[0].(map[string]any); ok {
			pr := payload(m)
			seq, _ := pr.num("seq")
			first = fmt.Sprintf("seq %s %s: %s", exactNumber(seq), pr.str("rule"), pr.str("detail"))
		}
		out += fmt.Sprintf("; %s, first %s", plural(len(ps), "problem", "problems"), excerpt(first))
	}
	if ws := strs(warnings); len(ws) > 0 {
		out += fmt.Sprintf("; %s, first %s", plural(len(ws), "warning", "warnings"), excerpt(ws[0]))
	}
	return out
}

// customEvents are the events of the protocols tenants register
// (internal/protocols/custom): their roles' answers and joins.
var customEvents = map[string]renderer{
	"role.answer": func(_ string, e debate.Event, p payload) string {
		return roleAnswer(firstOf(p.str("role"), e.Actor), p.obj("answer"))
	},
	"join.completed": func(_ string, _ debate.Event, p payload) string {
		inputs := p.obj("inputs")
		names := make([]string, 0, len(inputs))
		for k := range inputs {
			names = append(names, k)
		}
		sort.Strings(names)
		return fmt.Sprintf("%s joins %s", firstOf(p.str("node")), strings.Join(names, ", "))
	},
}

// roleAnswer renders an answer whose shape a tenant's document defines:
// its closed-set values (a verdict, a position) and confidence in
// brackets, then an excerpt of its texts.
func roleAnswer(role string, a payload) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var labels, parts []string
	for _, k := range keys {
		switch v := a[k].(type) {
		case string:
			if enumLike.MatchString(v) {
				labels = append(labels, k+" "+v)
			} else {
				parts = append(parts, v)
			}
		case []any:
			if k != "refs" {
				parts = append(parts, texts(v)...)
			}
		}
	}
	if c, ok := a.obj("muhasabah_record").num("confidence"); ok {
		labels = append(labels, "confidence "+confidence(c))
	} else if c, ok := a.num("confidence"); ok {
		labels = append(labels, "confidence "+confidence(c))
	}
	line := role
	if len(labels) > 0 {
		line += " [" + strings.Join(labels, ", ") + "]"
	}
	return line + ": " + firstOf(excerpt(strings.Join(parts, " / ")))
}

// texts are the strings of an answer's array: its strings, or its
// objects' strings other than ids and closed-set values.
func texts(vs []any) []string {
	var out []string
	for _, v := range vs {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if s, ok := x[k].(string); ok && !strings.HasSuffix(k, "_id") && k != "id" && !enumLike.MatchString(s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// strs are the strings of a JSON array.
func strs(vs []any) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// confidenceRange is the lowest and highest confidence of items ("0.5",
// "0.4–0.75"), or "" when none has one.
func confidenceRange(items []payload) string {
	lo, hi, n := 0.0, 0.0, 0
	for _, it := range items {
		c, ok := it.num("confidence")
		if !ok {
			continue
		}
		if n == 0 || c < lo {
			lo = c
		}
		if n == 0 || c > hi {
			hi = c
		}
		n++
	}
	switch {
	case n == 0:
		return ""
	case confidence(lo) == confidence(hi):
		return confidence(lo)
	}
	return confidence(lo) + "–" + confidence(hi)
}

// confidence is a confidence to two decimals, as people read them (0.8,
// not 0.7999999999999999).
func confidence(c float64) string {
	return strconv.FormatFloat(math.Round(c*100)/100, 'f', -1, 64)
}

// confidenceOf is p's confidence, or "?" when it has none.
func confidenceOf(p payload) string {
	if c, ok := p.num("confidence"); ok {
		return confidence(c)
	}
	return "?"
}
