// Package rules is the deterministic backend of the five IDIS debate roles
// (seed 000 §2.2): advocate, sanad_breaker, contradiction_finder,
// risk_officer and arbiter.
//
// Every role reasons only over its roles.Input: the deal's registry, its
// grading (grades, verdicts, defects, recomputed calcs) and the transcript.
// It reads no clock, no environment and no randomness, so the same input
// always gives the same output, byte for byte once encoded. Its content is
// generated from the registry, naming each claim by key, value, grade and
// verdict ("ARR of $4,500,000 for FY2025 (claim C1, grade B, VERIFIED)"),
// and every claim or calc it names is in claim_refs / calc_refs and in the
// Muhasabah record's supported ids. The record satisfies seed 000 §7's four
// rules by construction: a counter-hypothesis always, at least one
// falsifiability test with all three fields whenever the confidence is above
// 0.50 or the output takes a position, an uncertainty for every supported
// claim weaker than grade A or short of MUTAWATIR (and at least one in every
// output), and confidences computed from the evidence, never constants.
//
// Confidences come from grade scores (A 0.90, B 0.75, C 0.55, D 0.20)
// averaged with materiality weights (CRITICAL 3, HIGH 2, MEDIUM 1, LOW
// 0.5), the share of verified material claims, the strength of the
// evidence that shows a defect, and the challenges the arbiter upheld.
//
// Tool calls go through roles.Tools with the argument names of seed 000 §4;
// the output's tool_calls lists the calls that returned SUCCESS, which is
// how later turns know what was already flagged, enriched or escalated.
//
// Choices the seeds leave open:
//   - Division of labour: the sanad breaker challenges chain and source
//     defects and material claims graded C or D (a weak single source as
//     UNKNOWN_SOURCE, MINOR); the contradiction finder the matn defects
//     (INCONSISTENCY, UNIT_MISMATCH, TIME_WINDOW_MISMATCH, STALENESS) and
//     calc disagreements; the risk officer grade-D and FATAL claims nobody
//     has challenged. No role raises a (claim, defect type) pair the
//     transcript already holds, and no role raises a challenge the registry
//     does not support, so later rounds add nothing and positions settle.
//   - Challenge evidence: the ids that show the defect when they exist in
//     the deal, else the claim's own evidence; when the defect is that no
//     evidence exists (MISSING_LINK), the deal's documents, none of which
//     holds a span for the claim. A claim is never its own evidence.
//   - flag_defect records only findings the registry does not hold yet
//     (an unknown or grade-D primary source): a detected defect flagged
//     again would count against the claim's grade twice.
//   - Roles cite every claim they reason about, grade-D ones included, so a
//     debate on a deal with a grade-D material claim stops at
//     CRITICAL_DEFECT, seed 001's first stop rule.
//   - Turns answer each other (issue 17). The advocate's answer to a
//     challenge is a function of the challenge and the registry (answerTo):
//     contested when the registry does not support it, conceded with its
//     consequence when the registry holds the defect (or the claim is grade
//     D, FATAL or red-flagged), rebutted with corroborating evidence or an
//     agreeing recomputation the challenger did not cite, else narrowed to
//     the company's own figure. Every role recomputes it from the
//     transcript: the challengers withdraw a dismissed challenge, escalate
//     an upheld one whose rebuttal evidence is no better than grade C and
//     rest on a concession; the arbiter's ruling says whether the answer
//     meets the point. The rebuttal counts its concessions at once, so its
//     position and confidence are revised in the same round.
//   - A stance comes from analysis: a contradiction finder that finds no
//     mismatch, or a risk officer that can compute no figure, takes no
//     position. Every role states its strongest argument in
//     structured_content.argument (text and claim ids) for the brief.
//   - Tests and counter-hypotheses point the way that hurts the
//     conclusion: lower for ARR, margin, NRR, runway, higher for CAC, burn.
//   - Every turn opens with its round, so no two turns carry the same text.
//   - Texts quoted from elsewhere (grader explanations, claim texts, other
//     agents' challenge ids) are scrubbed: an id-shaped token that names
//     nothing in the deal is replaced, one that names a claim or calc is
//     referenced.
package rules
