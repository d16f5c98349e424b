package agentproto

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Risk classes of a step (seed 003's tool intents carry one).
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

var riskClasses = []string{RiskLow, RiskMedium, RiskHigh}

// Bounds of the options.
const (
	maxSteps         = 20
	maxObjective     = 2000
	maxEvidenceText  = 500
	maxRetriesLimit  = 5
	defaultRetries   = 2
	maxStepInputSize = 4096
)

var stepID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Options of an agent protocol session.
type Options struct {
	// Task drives the planner. Required.
	Task Task `json:"task"`
	// Tools is the tenant's registration of tools for this session: names
	// from the built-in safe set (SafeTools). Default: the tools the steps
	// name. A step whose tool is not registered is rejected by the critic.
	Tools []string `json:"tools"`
	// BlockRiskClasses are the risk classes whose tool intents the critic
	// blocks (default ["high"]; [] blocks none).
	BlockRiskClasses []string `json:"block_risk_classes"`
	// MaxRetries is how many new intents a failed tool execution may get
	// (0–5, default 2).
	MaxRetries int `json:"max_retries"`
}

// Task is the task spec: an objective and the steps that serve it.
type Task struct {
	// Objective is what the session must establish (1–2000 bytes).
	Objective string `json:"objective"`
	// Steps are 1–20 tool steps, each becoming one proposal.
	Steps []Step `json:"steps"`
}

// Step is one tool step of the task.
type Step struct {
	// ID is unique in the task: [a-z0-9][a-z0-9_-]{0,31}.
	ID string `json:"id"`
	// Tool is one of SafeTools.
	Tool string `json:"tool"`
	// Input is the tool's input, a JSON object the tool accepts.
	Input json.RawMessage `json:"input"`
	// RiskClass is low, medium or high (default low).
	RiskClass string `json:"risk_class"`
	// ExpectedEvidence says what the step's output establishes (≤ 500 bytes).
	ExpectedEvidence string `json:"expected_evidence,omitempty"`
	// Expect, if set, is the value the tool's "result" must equal; a claim
	// whose execution returned another value is challenged by the critic.
	Expect json.RawMessage `json:"expect,omitempty"`
}

// defaults: an absent max_retries takes the default, an explicit 0 means
// no retry.
func defaults() Options { return Options{MaxRetries: defaultRetries} }

// check validates and defaults decoded options.
func check(o *Options, v *debate.Violations) {
	t := &o.Task
	switch {
	case strings.TrimSpace(t.Objective) == "":
		v.Add("options.task.objective", "required")
	case len(t.Objective) > maxObjective:
		v.Add("options.task.objective", "at most %d bytes", maxObjective)
	}
	if len(t.Steps) == 0 || len(t.Steps) > maxSteps {
		v.Add("options.task.steps", "between 1 and %d steps are required", maxSteps)
	}
	seen := map[string]bool{}
	var named []string
	for i := range t.Steps {
		s := &t.Steps[i]
		f := fmt.Sprintf("options.task.steps[%d]", i)
		switch {
		case !stepID.MatchString(s.ID):
			v.Add(f+".id", "must match %s", stepID)
		case seen[s.ID]:
			v.Add(f+".id", "duplicate step id %q", s.ID)
		}
		seen[s.ID] = true
		s.RiskClass = cmp.Or(s.RiskClass, RiskLow)
		if !slices.Contains(riskClasses, s.RiskClass) {
			v.Add(f+".risk_class", "must be one of %v", riskClasses)
		}
		if len(s.ExpectedEvidence) > maxEvidenceText {
			v.Add(f+".expected_evidence", "at most %d bytes", maxEvidenceText)
		}
		if len(s.Expect) > 0 && !json.Valid(s.Expect) {
			v.Add(f+".expect", "not JSON")
		}
		tool, ok := safeTools[s.Tool]
		if !ok {
			v.Add(f+".tool", "%q is not a built-in safe tool (one of %v)", s.Tool, SafeTools())
			continue
		}
		if !slices.Contains(named, s.Tool) {
			named = append(named, s.Tool)
		}
		if len(s.Input) > maxStepInputSize {
			v.Add(f+".input", "at most %d bytes", maxStepInputSize)
		} else if err := tool.check(s.Input); err != nil {
			v.Add(f+".input", "%v", err)
		}
	}
	if o.Tools == nil {
		o.Tools = named
	}
	for i, name := range o.Tools {
		if _, ok := safeTools[name]; !ok {
			v.Add(fmt.Sprintf("options.tools[%d]", i), "%q is not a built-in safe tool (one of %v)", name, SafeTools())
		}
	}
	if o.BlockRiskClasses == nil {
		o.BlockRiskClasses = []string{RiskHigh}
	}
	for i, c := range o.BlockRiskClasses {
		if !slices.Contains(riskClasses, c) {
			v.Add(fmt.Sprintf("options.block_risk_classes[%d]", i), "must be one of %v", riskClasses)
		}
	}
	if o.MaxRetries < 0 || o.MaxRetries > maxRetriesLimit {
		v.Add("options.max_retries", "must be between 0 and %d", maxRetriesLimit)
	}
}

func (o *Options) step(id string) *Step {
	for i := range o.Task.Steps {
		if o.Task.Steps[i].ID == id {
			return &o.Task.Steps[i]
		}
	}
	return nil
}
