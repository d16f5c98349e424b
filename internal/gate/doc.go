// Package gate holds the fail-closed gates every agent output passes before
// it enters a debate's transcript (seed 000 §3.2–§3.3, §6.3, §7; seed 001
// §1.2, §3, §4.8): strict parsing of the AgentOutput wire form, the
// No-Free-Facts detector, the Muḥāsabah rules, the frivolous challenge
// detector and the stop conditions.
//
// The package is pure: it imports the standard library and internal/debate
// only, reads no clock and no environment, keeps no state between calls
// that an answer depends on (only a pool of scratch token slices), and
// gives the same answer for the same input. Everything it knows of the
// tenant's deal is in a Facts, built once per debate from the registry and
// its grading (NewFacts) and extended with the defects flagged during the
// debate (AddDefect). Whatever Facts does not know is treated as unknown
// and therefore unsupported: a nil Facts, a nil bundle or a nil grading make
// the gates stricter, never looser.
//
// # Rule codes
//
// Validate reports violations with these stable codes (debate.Violation's
// Rule); Field is the JSON path of the offending field
// ("muhasabah_record.falsifiability_tests[0].pass_fail_rule").
//
//   - SCHEMA: the output's shape is wrong: a required field is missing or
//     blank (agent_id, role, content), an id is malformed, an enumeration
//     (role, recommendation) has an unknown value, a list or text exceeds
//     its limit (see the Max constants), a challenge id is repeated,
//     structured_content or tool arguments are not JSON objects, the
//     timestamp is not RFC 3339. ParseOutput reports the same problems as a
//     *debate.ValidationError.
//   - MISSING_MUHASABAH: the Muḥāsabah record is absent or empty (it
//     supports nothing, says nothing and states a zero confidence).
//   - CONFIDENCE_RANGE: the record's confidence, or the position's, is not
//     a number within [0, 1].
//   - NO_FREE_FACTS: a text of the output makes a factual assertion (see
//     NoFreeFacts) without a claim or calc of the deal to rest on:
//     claim_refs/calc_refs name none, or the record's
//     supported_claim_ids/supported_calc_ids name none (seed 000 §7.1 rule
//     1), or the text cites a claim or calc (by id or key) that none of
//     those lists names. The texts are the content, every key and string
//     of structured_content at any depth (field "structured_content.a.b[0]"),
//     the rulings' reasons, the open questions and the evidence requests'
//     queries; a challenge's description rests on the output's refs plus
//     the challenge's own claims.
//   - NO_FREE_FACTS_UNKNOWN_REF: the content or a challenge description
//     cites an id that is not the deal's (a UUID or a claim-key-shaped
//     token such as "C12" that names nothing in the deal); the other texts
//     may name the debate's own ids (challenge ids) and are not checked for
//     this. NoFreeFacts used on its own also reports every unknown
//     entry of its refs with this code.
//   - UNKNOWN_REF: an entry of claim_refs, supported_claim_ids,
//     evidence_requests[i].claim_refs is not a claim of the deal, or an
//     entry of calc_refs, supported_calc_ids is not a calc of the deal.
//     Non-empty is never enough: every id must resolve.
//   - FALSIFIABILITY_MISSING: the output has a confidence above 0.50 (the
//     record's or the position's, whichever is higher) or takes a position,
//     and lists no falsifiability test; or a listed test lacks one of
//     test_description, required_evidence, pass_fail_rule.
//   - UNCERTAINTIES_MISSING: the output rests on a weak source and lists no
//     uncertainty; or a listed uncertainty lacks one of uncertainty, impact,
//     mitigation. A claim is weak when its grade is below A, its
//     corroboration is NONE, AHAD_1 or AHAD_2 (anything short of
//     MUTAWATIR), or it has an OPEN FATAL defect; a calc is weak when its
//     grade, or the grade of one of its input claims, is below A. The
//     claims and calcs an output rests on are those of claim_refs,
//     calc_refs and the record's supported ids.
//   - OVERCONFIDENCE: the confidence is above 0.80 and the record lists no
//     uncertainty. Seed 000 §7.1 accepts a counter-hypothesis instead; seed
//     001 §4.8 does not. The stricter rule applies: uncertainties are
//     required, a counter-hypothesis does not replace them.
//   - FRIVOLOUS_CHALLENGE: a challenge fails the frivolous challenge
//     detector of seed 000 §6.3 (no or unknown claims, no or unknown defect
//     type, severity or cure protocol, no or unknown evidence, no
//     description or one shorter than MinChallengeDescription characters).
//
// # Stop conditions
//
// StopCondition applies seed 001 §3 in its priority order CRITICAL_DEFECT >
// MAX_ROUNDS > CONSENSUS > STABLE_DISSENT > EVIDENCE_EXHAUSTED; the
// definitions are on StopState and StopCondition.
package gate
