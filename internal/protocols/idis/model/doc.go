// Package model is the model-backed backend of the five IDIS debate roles
// (seed 000 §2.2, model class "Reasoning"): each role is played by a chat
// model through the agent-call runtime's llm.Backend, and never trusted.
//
//   - The system prompt is an embedded, versioned template per role
//     (prompts/<role>.v2.tmpl); PromptID gives its id and SHA-256, which
//     the output's model record carries. It never contains deal text.
//   - The deal context (claims with grades, open defects, calcs, evidence
//     excerpts, the transcript so far within Config.TranscriptChars) goes
//     in the user message as one escaped JSON document between DATA
//     markers, labelled as untrusted data.
//   - The response format is a hand-built JSON schema of the AgentOutput +
//     Muḥāsabah shape whose required fields are exactly those
//     gate.ParseOutput requires.
//   - Only the role's permitted tools (idis.Matrix) are offered as
//     functions, and every call still goes through roles.Input.Tools,
//     where the server checks permission and quota; the output's
//     tool_calls are the calls the server ran successfully.
//   - The answer is parsed with gate.ParseOutput and checked with the
//     protocol's gate (roles.Input.Check; without it gate.Validate on the
//     deal). While it fails, the violations are sent back for at most
//     Config.MaxRepairs repairs (llm.Backend.JSON). An output still invalid
//     is returned with a nil error for the protocol's gate to reject; an
//     answer that never parsed becomes an output whose Content is the
//     model's last answer (clipped) and whose Muḥāsabah record is empty,
//     which the gate always rejects (MISSING_MUHASABAH).
//
// Timeouts, retries, budgets, the response cache and redaction are the
// runtime's (package llm).
package model
