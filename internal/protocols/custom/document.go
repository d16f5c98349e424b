package custom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/tools"
)

// Limits of a document. They bound what one registration may cost the
// server: prompt bytes go into every model call of the role.
const (
	MaxDocumentBytes = 256 << 10
	MaxPromptBytes   = 8000
	MaxTaskBytes     = 2000
	MaxRoles         = 16
	MaxNodes         = 64
	MaxBranches      = 8
	MaxRounds        = 10
	MaxDeliverables  = 32
	MaxSchemaDepth   = 8
	MaxSchemaBytes   = 16 << 10
)

// Node kinds.
const (
	KindCall     = "call"
	KindParallel = "parallel"
	KindJoin     = "join"
	KindJudge    = "judge"
	KindLoop     = "loop"
)

// Gates a role may ask for. The schema gate always applies.
const (
	GateSchema      = "schema"
	GateNoFreeFacts = "no_free_facts"
	GateMuhasabah   = "muhasabah"
)

// Stop rules.
const (
	StopMaxRounds     = "max_rounds"
	StopConsensus     = "consensus"
	StopStableDissent = "stable_dissent"
	StopJudgeVerdict  = "judge_verdict"
	StopBudget        = "budget"
)

// NodeFinalize is the node every compiled protocol ends with; a document
// may not use the name.
const NodeFinalize = "finalize"

// Document is a protocol as a tenant writes it (YAML or JSON). Every field
// is data: nothing in it is executed, fetched or evaluated.
type Document struct {
	// Name is lower case letters, digits, ".", "_" and "-", starting with a
	// letter; with Version it identifies the document within the tenant.
	Name    string `json:"name"`
	Version int    `json:"version"`
	// Description is shown by ListProtocols.
	Description  string       `json:"description,omitempty"`
	Roles        []Role       `json:"roles"`
	Graph        Graph        `json:"graph"`
	Stop         []StopRule   `json:"stop"`
	Deliverables Deliverables `json:"deliverables"`
}

// Role is an agent played by the tenant's (or the deployment's) model.
type Role struct {
	ID string `json:"id"`
	// Prompt is the role's system prompt (at most MaxPromptBytes).
	Prompt string `json:"prompt"`
	// Output is the JSON schema of the role's answer: an object (see
	// schema.go for the keywords allowed).
	Output json.RawMessage `json:"output"`
	// Tools are the server tools (package tools) the role may call.
	Tools []string `json:"tools,omitempty"`
	// Gates are the gates its answers pass besides the schema:
	// no_free_facts (every text of the answer rests on the claims and calcs
	// the answer lists in "refs") and muhasabah (a self-accounting record
	// in "muhasabah_record").
	Gates []string `json:"gates,omitempty"`
}

// Graph is the protocol's node graph.
type Graph struct {
	Start string `json:"start"`
	Nodes []Node `json:"nodes"`
}

// Node is one node of the graph.
type Node struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Role and Task: a call's or a judge's agent and instruction.
	Role string `json:"role,omitempty"`
	Task string `json:"task,omitempty"`
	// Branches: a parallel fan-out's agents, which answer concurrently.
	Branches []Branch `json:"branches,omitempty"`
	// Inputs: the nodes whose answers a call or judge sees (all answered
	// nodes when empty) or a join combines (required).
	Inputs []string `json:"inputs,omitempty"`
	// Verdict: the field of a judge's answer that holds its verdict.
	Verdict string `json:"verdict,omitempty"`
	// Next is the node that follows; empty ends the graph. After a loop,
	// Next is where the graph goes once a stop rule fires.
	Next string `json:"next,omitempty"`
	// Repeat: the node a loop starts the next round at.
	Repeat string `json:"repeat,omitempty"`
}

// Branch is one agent of a parallel fan-out.
type Branch struct {
	Role string `json:"role"`
	Task string `json:"task,omitempty"`
}

// StopRule is one rule of the fixed vocabulary; rules are checked in order
// at every loop node (and once at the end of a graph without a loop), and
// the first that holds stops the debate.
type StopRule struct {
	// Rule is max_rounds, consensus, stable_dissent, judge_verdict or
	// budget.
	Rule string `json:"rule"`
	// Rounds: max_rounds' limit; stable_dissent's rounds of unchanged
	// dissent.
	Rounds int `json:"rounds,omitempty"`
	// Node and Field: the parallel node whose branches must agree
	// (consensus) or keep disagreeing (stable_dissent) on Field; the judge
	// node of judge_verdict.
	Node  string `json:"node,omitempty"`
	Field string `json:"field,omitempty"`
	// Values: the verdicts that stop the debate (judge_verdict).
	Values []string `json:"values,omitempty"`
	// Tokens: the model tokens the debate may use (budget).
	Tokens int `json:"tokens,omitempty"`
}

// Deliverables is the shape of the deliverables.created event.
type Deliverables struct {
	Fields []Deliverable `json:"fields"`
}

// Deliverable is one field of the deliverables: the last accepted answer
// of a node ("NODE") or one field of it ("NODE.FIELD"; for a parallel node,
// that field of every branch's answer, by role).
type Deliverable struct {
	Name string `json:"name"`
	From string `json:"from"`
}

var (
	nameRE  = regexp.MustCompile(`^[a-z][a-z0-9._-]{0,63}$`)
	identRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	fieldRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// Reserved answer fields the gates and the tool loop use.
const (
	fieldRefs      = "refs"
	fieldMuhasabah = "muhasabah_record"
	fieldToolCalls = "tool_calls"
)

// Parse decodes a document (JSON when it starts with "{", else YAML)
// strictly and validates it. Its errors are *debate.ValidationError
// (errors.Is debate.ErrInvalid) with field paths into the document
// ("roles[1].prompt"); builtin reports the names taken by the server's own
// protocols (nil: none).
func Parse(raw []byte, builtin func(name string) bool) (*Document, error) {
	var v debate.Violations
	if len(raw) > MaxDocumentBytes {
		v.Add("", "the document is %d bytes, more than %d", len(raw), MaxDocumentBytes)
		return nil, v.Err()
	}
	js, err := toJSON(raw)
	if err != nil {
		v.Add("", "%s", err.Error())
		return nil, v.Err()
	}
	generic, err := decodeValue(js)
	if err != nil {
		v.Add("", "not a JSON or YAML document: %s", err.Error())
		return nil, v.Err()
	}
	if _, ok := generic.(map[string]any); !ok {
		v.Add("", "the document must be a mapping (object)")
		return nil, v.Err()
	}
	unknownFields(&v, "", generic, reflect.TypeFor[Document]())
	if v.Len() > 0 {
		return nil, v.Err()
	}
	var d Document
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			v.Add(te.Field, "must be %s, not %s", te.Type.String(), te.Value)
		} else {
			v.Add("", "%s", err.Error())
		}
		return nil, v.Err()
	}
	if err := d.Validate(builtin); err != nil {
		return nil, err
	}
	return &d, nil
}

func toJSON(raw []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, errors.New("the document is empty")
	}
	if trimmed[0] == '{' {
		return trimmed, nil
	}
	var y any
	if err := yaml.Unmarshal(trimmed, &y); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	js, err := json.Marshal(y)
	if err != nil {
		return nil, fmt.Errorf("the YAML has a value JSON cannot hold (a non-string key?): %w", err)
	}
	return js, nil
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// unknownFields reports every member of v that t does not declare, by
// path. Type mismatches are left to the decoder.
func unknownFields(v *debate.Violations, path string, val any, t reflect.Type) {
	if t == rawMessageType {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		unknownFields(v, path, val, t.Elem())
	case reflect.Struct:
		m, ok := val.(map[string]any)
		if !ok {
			return
		}
		fields := map[string]reflect.Type{}
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields[name] = f.Type
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			ft, ok := fields[k]
			if !ok {
				v.Add(join(path, k), "unknown field (the fields here are %s)", strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
				continue
			}
			unknownFields(v, join(path, k), m[k], ft)
		}
	case reflect.Slice:
		arr, ok := val.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			unknownFields(v, fmt.Sprintf("%s[%d]", path, i), e, t.Elem())
		}
	}
}

// checkNames checks a role's list of tools or gates (what: "tool"): each
// one of known (all: "the gates"), none twice.
func checkNames(v *debate.Violations, field, what, all string, names, known []string) {
	seen := map[string]bool{}
	for j, x := range names {
		f := fmt.Sprintf("%s[%d]", field, j)
		switch {
		case !slices.Contains(known, x):
			v.Add(f, "unknown %s %q; %s are %s", what, x, all, strings.Join(known, ", "))
		case seen[x]:
			v.Add(f, "duplicate %s %q", what, x)
		}
		seen[x] = true
	}
}

// checkCount reports a list of n nouns that is empty or longer than limit.
func checkCount(v *debate.Violations, field, noun string, n, limit int) {
	switch {
	case n == 0:
		v.Add(field, "at least one %s is required", noun)
	case n > limit:
		v.Add(field, "at most %d %ss", limit, noun)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Validate checks the document: names, limits, roles and their schemas,
// tools the server has, gates, the graph (known kinds, existing targets,
// every node reachable from the start, cycles only through a loop), stop
// rules (at least one; a loop needs max_rounds) and deliverables. Returns
// a *debate.ValidationError naming every problem by path.
func (d *Document) Validate(builtin func(name string) bool) error {
	var v debate.Violations
	switch {
	case !nameRE.MatchString(d.Name):
		v.Add("name", "must match %s", nameRE)
	case builtin != nil && builtin(d.Name):
		v.Add("name", "%q is a built-in protocol", d.Name)
	}
	if d.Version < 1 {
		v.Add("version", "must be a positive integer")
	}
	if len(d.Description) > MaxTaskBytes {
		v.Add("description", "is %d bytes, more than %d", len(d.Description), MaxTaskBytes)
	}

	roles := map[string]*Role{}
	checkCount(&v, "roles", "role", len(d.Roles), MaxRoles)
	for i := range d.Roles {
		r := &d.Roles[i]
		f := fmt.Sprintf("roles[%d]", i)
		switch {
		case !identRE.MatchString(r.ID):
			v.Add(f+".id", "must match %s", identRE)
		case r.ID == orchestrator.ActorEngine || r.ID == orchestrator.ActorOperator:
			v.Add(f+".id", "%q is reserved", r.ID)
		case roles[r.ID] != nil:
			v.Add(f+".id", "duplicate role %q", r.ID)
		default:
			roles[r.ID] = r
		}
		switch {
		case strings.TrimSpace(r.Prompt) == "":
			v.Add(f+".prompt", "required")
		case len(r.Prompt) > MaxPromptBytes:
			v.Add(f+".prompt", "is %d bytes, more than %d", len(r.Prompt), MaxPromptBytes)
		}
		checkOutputSchema(&v, f+".output", r.Output)
		checkNames(&v, f+".tools", "tool", "the server's tools", r.Tools, tools.Names)
		checkNames(&v, f+".gates", "gate", "the gates", r.Gates, []string{GateSchema, GateNoFreeFacts, GateMuhasabah})
	}

	nodes := map[string]*Node{}
	checkCount(&v, "graph.nodes", "node", len(d.Graph.Nodes), MaxNodes)
	for i := range d.Graph.Nodes {
		n := &d.Graph.Nodes[i]
		f := fmt.Sprintf("graph.nodes[%d]", i)
		switch {
		case !identRE.MatchString(n.ID):
			v.Add(f+".id", "must match %s", identRE)
		case n.ID == NodeFinalize:
			v.Add(f+".id", "%q is reserved for the node that ends every debate", n.ID)
		case nodes[n.ID] != nil:
			v.Add(f+".id", "duplicate node %q", n.ID)
		default:
			nodes[n.ID] = n
		}
	}
	loops := false
	for i := range d.Graph.Nodes {
		n := &d.Graph.Nodes[i]
		f := fmt.Sprintf("graph.nodes[%d]", i)
		role := func(field, id string) {
			switch {
			case id == "":
				v.Add(field, "required")
			case roles[id] == nil:
				v.Add(field, "unknown role %q", id)
			}
		}
		task := func(field, t string) {
			if len(t) > MaxTaskBytes {
				v.Add(field, "is %d bytes, more than %d", len(t), MaxTaskBytes)
			}
		}
		has := map[string]bool{"role": n.Role != "", "task": n.Task != "", "branches": len(n.Branches) > 0,
			"inputs": len(n.Inputs) > 0, "repeat": n.Repeat != "", "verdict": n.Verdict != ""}
		none := func(fields ...string) {
			for _, field := range fields {
				if has[field] {
					v.Add(f+"."+field, "a %s node has no %s", n.Kind, field)
				}
			}
		}
		target := func(field, id string) {
			if id != "" && nodes[id] == nil {
				v.Add(field, "unknown node %q", id)
			}
		}
		inputs := func(required bool) {
			if required && len(n.Inputs) == 0 {
				v.Add(f+".inputs", "required: the nodes whose answers it combines")
			}
			for j, in := range n.Inputs {
				switch m := nodes[in]; {
				case m == nil:
					v.Add(fmt.Sprintf("%s.inputs[%d]", f, j), "unknown node %q", in)
				case m.Kind == KindLoop || m.Kind == KindJoin && in == n.ID:
					v.Add(fmt.Sprintf("%s.inputs[%d]", f, j), "node %q has no answer", in)
				}
			}
		}
		target(f+".next", n.Next)
		switch n.Kind {
		case KindCall, KindJudge:
			role(f+".role", n.Role)
			task(f+".task", n.Task)
			none("branches", "repeat")
			inputs(false)
			if n.Kind == KindJudge {
				switch r := roles[n.Role]; {
				case n.Verdict == "":
					v.Add(f+".verdict", "required: the field of the judge's answer that holds the verdict")
				case r != nil && !schemaHasField(r.Output, n.Verdict):
					v.Add(f+".verdict", "role %q's output schema has no property %q", n.Role, n.Verdict)
				}
			} else {
				none("verdict")
			}
		case KindParallel:
			none("role", "task", "repeat", "verdict")
			inputs(false)
			if len(n.Branches) < 2 || len(n.Branches) > MaxBranches {
				v.Add(f+".branches", "a parallel node has 2 to %d branches", MaxBranches)
			}
			for j, b := range n.Branches {
				role(fmt.Sprintf("%s.branches[%d].role", f, j), b.Role)
				task(fmt.Sprintf("%s.branches[%d].task", f, j), b.Task)
			}
		case KindJoin:
			none("role", "task", "branches", "repeat", "verdict")
			inputs(true)
		case KindLoop:
			loops = true
			none("role", "task", "branches", "inputs", "verdict")
			if n.Repeat == "" {
				v.Add(f+".repeat", "required: the node the next round starts at")
			}
			target(f+".repeat", n.Repeat)
		default:
			v.Add(f+".kind", "unknown kind %q; the kinds are call, parallel, join, judge, loop", n.Kind)
		}
	}
	switch {
	case d.Graph.Start == "":
		v.Add("graph.start", "required")
	case nodes[d.Graph.Start] == nil:
		v.Add("graph.start", "unknown node %q", d.Graph.Start)
	default:
		reached := map[string]bool{d.Graph.Start: true}
		queue := []string{d.Graph.Start}
		for len(queue) > 0 {
			n := nodes[queue[0]]
			queue = queue[1:]
			for _, e := range []string{n.Next, n.Repeat} {
				if e != "" && nodes[e] != nil && !reached[e] {
					reached[e] = true
					queue = append(queue, e)
				}
			}
		}
		for i, n := range d.Graph.Nodes {
			if nodes[n.ID] == &d.Graph.Nodes[i] && !reached[n.ID] {
				v.Add(fmt.Sprintf("graph.nodes[%d]", i), "node %q is unreachable from the start %q", n.ID, d.Graph.Start)
			}
		}
		// Following next alone must end: only a loop goes back.
		for i, n := range d.Graph.Nodes {
			seen := map[string]bool{}
			for cur := nodes[n.ID]; cur != nil && cur.Next != ""; cur = nodes[cur.Next] {
				if seen[cur.ID] {
					v.Add(fmt.Sprintf("graph.nodes[%d].next", i), "the next edges from %q form a cycle; only a loop's repeat goes back", n.ID)
					break
				}
				seen[cur.ID] = true
			}
		}
	}

	hasMax := false
	if len(d.Stop) == 0 {
		v.Add("stop", "at least one stop rule is required")
	}
	for i, s := range d.Stop {
		f := fmt.Sprintf("stop[%d]", i)
		node := func(kinds ...string) *Node {
			n := nodes[s.Node]
			switch {
			case s.Node == "":
				v.Add(f+".node", "required")
			case n == nil:
				v.Add(f+".node", "unknown node %q", s.Node)
			case !slices.Contains(kinds, n.Kind):
				v.Add(f+".node", "node %q is a %s node, not %s", s.Node, n.Kind, strings.Join(kinds, " or "))
				return nil
			}
			return n
		}
		field := func(n *Node) {
			if s.Field == "" {
				v.Add(f+".field", "required")
				return
			}
			if n == nil {
				return
			}
			for _, b := range n.Branches {
				if r := roles[b.Role]; r != nil && !schemaHasField(r.Output, s.Field) {
					v.Add(f+".field", "role %q's output schema has no property %q", b.Role, s.Field)
				}
			}
		}
		switch s.Rule {
		case StopMaxRounds:
			hasMax = true
			if s.Rounds < 1 || s.Rounds > MaxRounds {
				v.Add(f+".rounds", "must be 1 to %d", MaxRounds)
			}
		case StopConsensus:
			field(node(KindParallel))
		case StopStableDissent:
			field(node(KindParallel))
			if s.Rounds < 2 || s.Rounds > MaxRounds {
				v.Add(f+".rounds", "must be 2 to %d", MaxRounds)
			}
		case StopJudgeVerdict:
			node(KindJudge)
			if len(s.Values) == 0 {
				v.Add(f+".values", "required: the verdicts that stop the debate")
			}
		case StopBudget:
			if s.Tokens < 1 {
				v.Add(f+".tokens", "must be positive")
			}
		default:
			v.Add(f+".rule", "unknown rule %q; the rules are max_rounds, consensus, stable_dissent, judge_verdict, budget", s.Rule)
		}
	}
	if loops && !hasMax && len(d.Stop) > 0 {
		v.Add("stop", "a graph with a loop needs a max_rounds rule")
	}

	checkCount(&v, "deliverables.fields", "field", len(d.Deliverables.Fields), MaxDeliverables)
	names := map[string]bool{}
	for i, dl := range d.Deliverables.Fields {
		f := fmt.Sprintf("deliverables.fields[%d]", i)
		switch {
		case !fieldRE.MatchString(dl.Name):
			v.Add(f+".name", "must match %s", fieldRE)
		case names[dl.Name]:
			v.Add(f+".name", "duplicate field %q", dl.Name)
		}
		names[dl.Name] = true
		node, fld, _ := strings.Cut(dl.From, ".")
		switch n := nodes[node]; {
		case dl.From == "":
			v.Add(f+".from", "required: NODE or NODE.FIELD")
		case n == nil:
			v.Add(f+".from", "unknown node %q", node)
		case n.Kind == KindLoop:
			v.Add(f+".from", "loop node %q has no answer", node)
		case fld != "" && !fieldRE.MatchString(fld):
			v.Add(f+".from", "bad field %q", fld)
		}
	}
	return v.Err()
}

// rule returns the first stop rule of the kind (max_rounds, budget …), or
// the zero StopRule.
func (d *Document) rule(kind string) StopRule {
	for _, r := range d.Stop {
		if r.Rule == kind {
			return r
		}
	}
	return StopRule{}
}

func (d *Document) role(id string) *Role {
	for i := range d.Roles {
		if d.Roles[i].ID == id {
			return &d.Roles[i]
		}
	}
	return nil
}

func (d *Document) node(id string) *Node {
	for i := range d.Graph.Nodes {
		if d.Graph.Nodes[i].ID == id {
			return &d.Graph.Nodes[i]
		}
	}
	return nil
}
