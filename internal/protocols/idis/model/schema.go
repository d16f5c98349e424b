package model

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// schemaName names the response format.
const schemaName = "agent_output"

// The schema is built by hand rather than with jsonschema.GenerateSchemaFor,
// which marks every field without omitempty required: the required lists
// here are exactly gate.ParseOutput's, so a model that follows the schema
// is never asked for a field the gate does not need.
func str(desc string) jsonschema.Definition {
	return jsonschema.Definition{Type: jsonschema.String, Description: desc}
}

func strs(desc string) jsonschema.Definition {
	return jsonschema.Definition{Type: jsonschema.Array, Description: desc, Items: &jsonschema.Definition{Type: jsonschema.String}}
}

func num(desc string) jsonschema.Definition {
	return jsonschema.Definition{Type: jsonschema.Number, Description: desc}
}

func obj(props map[string]jsonschema.Definition, required ...string) jsonschema.Definition {
	return jsonschema.Definition{Type: jsonschema.Object, Properties: props, Required: required, AdditionalProperties: false}
}

func arr(item jsonschema.Definition) jsonschema.Definition {
	return jsonschema.Definition{Type: jsonschema.Array, Items: &item}
}

// outputSchema is the AgentOutput + Muḥāsabah shape (seed 000 §3.2–§3.3)
// for role, marshalled once (jsonschema.Definition's MarshalJSON writes to
// the definition, so a shared one must not be marshalled concurrently).
// tool_calls is left out: the model calls tools as functions, and the turn
// records the calls it made.
func outputSchema(role string) (json.RawMessage, error) {
	d := obj(map[string]jsonschema.Definition{
		"agent_id":           {Type: jsonschema.String, Enum: []string{role}},
		"role":               {Type: jsonschema.String, Enum: []string{role}},
		"round_number":       {Type: jsonschema.Integer},
		"content":            str("the turn's argument; every fact rests on claim_refs/calc_refs"),
		"structured_content": {Type: jsonschema.Object, Description: "optional free-form JSON object"},
		"claim_refs":         strs("ids of the deal's claims the content rests on"),
		"calc_refs":          strs("ids of the deal's calcs the content rests on"),
		"muhasabah_record": obj(map[string]jsonschema.Definition{
			"supported_claim_ids": strs("ids of the claims that support the output"),
			"supported_calc_ids":  strs("ids of the calcs that support the output"),
			"evidence_summary":    str(""),
			"counter_hypothesis":  str("alternative explanation for the evidence"),
			"falsifiability_tests": arr(obj(map[string]jsonschema.Definition{
				"test_description":  str(""),
				"required_evidence": str(""),
				"pass_fail_rule":    str(""),
			}, "test_description", "required_evidence", "pass_fail_rule")),
			"uncertainties": arr(obj(map[string]jsonschema.Definition{
				"uncertainty": str(""),
				"impact":      str(""),
				"mitigation":  str(""),
			}, "uncertainty", "impact", "mitigation")),
			"failure_modes":            strs(""),
			"confidence":               num("in [0, 1]"),
			"confidence_justification": str(""),
		}, "supported_claim_ids", "confidence"),
		"position": obj(map[string]jsonschema.Definition{
			"recommendation": {Type: jsonschema.String, Enum: []string{debate.RecommendInvest, debate.RecommendConditional, debate.RecommendPass}},
			"confidence":     num("in [0, 1]"),
		}, "recommendation", "confidence"),
		"challenges": arr(obj(map[string]jsonschema.Definition{
			"challenge_id":  str(""),
			"claim_refs":    strs(""),
			"defect_type":   str(""),
			"severity":      str("FATAL, MAJOR or MINOR"),
			"cure_protocol": str(""),
			"evidence_refs": strs("ids of evidence items of the deal"),
			"description":   str(""),
		}, "challenge_id", "claim_refs", "defect_type", "evidence_refs", "description")),
		"rulings": arr(obj(map[string]jsonschema.Definition{
			"challenge_id": str(""),
			"upheld":       {Type: jsonschema.Boolean},
			"frivolous":    {Type: jsonschema.Boolean},
			"reason":       str(""),
		}, "challenge_id", "upheld", "reason")),
		"evidence_requests": arr(obj(map[string]jsonschema.Definition{
			"query":      str(""),
			"claim_refs": strs(""),
		}, "query")),
		"open_questions": strs(""),
	}, "agent_id", "role", "content", "claim_refs", "muhasabah_record")
	return json.Marshal(&d)
}

type toolParam struct {
	desc   string
	params jsonschema.Definition
}

// toolParams returns the parameters of each tool (seed 000 §4), as the
// server's tools package checks them: fresh definitions each time, since
// marshalling writes to them.
func toolParams() map[string]toolParam {
	return map[string]toolParam{
		tools.LookupClaim: {"Retrieve a claim of the deal by id, with its sanad and evidence on request.", obj(map[string]jsonschema.Definition{
			"claim_id":         str("id of the claim"),
			"include_sanad":    {Type: jsonschema.Boolean},
			"include_evidence": {Type: jsonschema.Boolean},
		}, "claim_id")},
		tools.LookupCalc: {"Retrieve a deterministic calculation of the deal by id.", obj(map[string]jsonschema.Definition{
			"calc_id":        str("id of the calc"),
			"include_inputs": {Type: jsonschema.Boolean},
		}, "calc_id")},
		tools.SearchEvidence: {"Search the deal's evidence for a query.", obj(map[string]jsonschema.Definition{
			"query":       str("search query"),
			"deal_id":     str("id of the deal"),
			"claim_class": str("optional claim class filter"),
			"min_grade":   {Type: jsonschema.String, Enum: []string{"A", "B", "C", "D"}},
			"limit":       {Type: jsonschema.Integer, Description: "1 to 50, default 10"},
		}, "query", "deal_id")},
		tools.FlagDefect: {"Flag a defect in a claim's evidence chain; needs evidence and a description of at least 50 characters.", obj(map[string]jsonschema.Definition{
			"claim_id":      str(""),
			"defect_type":   str(""),
			"severity":      {Type: jsonschema.String, Enum: []string{"FATAL", "MAJOR", "MINOR"}},
			"description":   str(""),
			"evidence_refs": strs("ids of evidence items of the deal"),
			"cure_protocol": str(""),
		}, "claim_id", "defect_type", "severity", "description", "evidence_refs", "cure_protocol")},
		tools.RequestHumanReview: {"Escalate claims to human review.", obj(map[string]jsonschema.Definition{
			"claim_ids":     strs(""),
			"reason":        str(""),
			"priority":      {Type: jsonschema.String, Enum: []string{"LOW", "NORMAL", "HIGH", "CRITICAL"}},
			"required_role": str(""),
		}, "claim_ids", "reason")},
		tools.QueryEnrichment: {"Query external enrichment data (grade C or D: corroborate it).", obj(map[string]jsonschema.Definition{
			"entity_type": {Type: jsonschema.String, Enum: []string{"COMPANY", "PERSON", "MARKET"}},
			"entity_name": str(""),
			"data_points": strs(""),
		}, "entity_type", "entity_name", "data_points")},
	}
}

// toolDefs returns the functions offered to a role: its permitted tools
// that this package can describe, in the matrix's sorted order.
func toolDefs(names []string) ([]openai.Tool, []string, error) {
	var defs []openai.Tool
	var offered []string
	params := toolParams()
	for _, n := range names {
		p, ok := params[n]
		if !ok {
			continue
		}
		raw, err := json.Marshal(&p.params)
		if err != nil {
			return nil, nil, err
		}
		defs = append(defs, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: n, Description: p.desc, Parameters: json.RawMessage(raw),
		}})
		offered = append(offered, n)
	}
	return defs, offered, nil
}
