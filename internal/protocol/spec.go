// Package protocol is the protocol kit: a protocol is a typed Spec (its
// roles, options, initial state, graph of typed nodes, role guard, tool
// matrix) compiled into the orchestrator.Protocol the engine runs. The kit
// owns what every protocol would otherwise redo: strict options decoding
// with defaults (parsed once per distinct options and cached), the state
// codec, the rules-or-model call with a fail-closed re-gate (Models.Ask),
// the budget stop and the standard event types and payloads.
//
// A protocol's own logic (its prompts, gates, rules and how an answer
// changes its state) stays in internal/protocols/<name>.
package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
)

// Spec is a protocol over its options O and its state S. Compile turns it
// into an orchestrator.Protocol.
type Spec[O, S any] struct {
	// Name, Description, Roles, Start, MaxSteps, Pipelined, RoleGuard and
	// Tools are the orchestrator.Protocol's fields of the same names.
	Name        string
	Description string
	Roles       []string
	Start       string
	MaxSteps    int
	Pipelined   bool
	RoleGuard   map[string][]string
	Tools       map[string][]string
	// Deliverables is the orchestrator.Protocol's hook of the same name
	// (nil: the payload's "markdown" and no further artifacts).
	Deliverables func(events []debate.Event, deliverables json.RawMessage) ([]debate.Artifact, string)
	// CheckOutput is the orchestrator.Protocol's hook of the same name
	// (ValidateOutput); optional.
	CheckOutput func(b *debate.DealBundle, defects []debate.Defect, output []byte) ([]debate.Violation, error)
	// Defaults returns the options before decoding (nil: the zero O): a
	// member absent from the input keeps its default.
	Defaults func() O
	// Check validates (and may complete) decoded options, adding a
	// violation per bad field under "options.". Nil accepts any O.
	Check func(o *O, v *debate.Violations)
	// NewState returns an empty state, the base the codec decodes onto
	// (nil: new(S)).
	NewState func() *S
	// Init returns the initial state from the debate's options (nil: the
	// engine's {}, decoded onto NewState's).
	Init func(o *O, in orchestrator.InitInput) (*S, error)
	// Nodes in declared order.
	Nodes []*Node[O, S]
}

// Node is a typed orchestrator.Node: its functions see decoded options and
// state. Name, Actor, Edges, Timeout, MaxAttempts and EndsRound are the
// orchestrator.Node's.
type Node[O, S any] struct {
	Name  string
	Actor string
	// Run is a task node's work, as orchestrator.NodeFunc: an error fails
	// the attempt (Permanent skips the others). Options or a state that do
	// not decode fail it permanently before Run.
	Run func(ctx context.Context, t *Turn[O, S]) (*orchestrator.NodeOutput, error)
	// Branches and Merge make a parallel group: Merge folds the branches'
	// outputs, in declared order, into the group's input state, which the
	// kit encodes as the group's output state (see Branches).
	Branches []*Node[O, S]
	Merge    func(s *S, outs []*orchestrator.NodeOutput) error
	Edges    []string
	// Next picks the next node (one of Edges, or "" to end) from the node's
	// output state.
	Next        func(s *S) string
	Timeout     time.Duration
	MaxAttempts int
	EndsRound   bool
}

// Turn is what a node's Run works on: its input, the debate's options
// (shared between the nodes of every debate with the same options: read
// only) and the state decoded for this run (the node's to change).
type Turn[O, S any] struct {
	*orchestrator.NodeInput
	Opts  *O
	State *S
}

// Save returns the output with the turn's state encoded, the events and
// the stop.
func (t *Turn[O, S]) Save(events []orchestrator.Emit, stop *orchestrator.Stop) (*orchestrator.NodeOutput, error) {
	st, err := Encode(t.State)
	if err != nil {
		return nil, err
	}
	return &orchestrator.NodeOutput{State: st, Events: events, Stop: stop}, nil
}

// Encode is the state codec's encoder (any value as a node's JSON state).
func Encode(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("protocol: encode state: %w", err)
	}
	return b, nil
}

// Compile returns the orchestrator protocol of spec. The engine validates
// it when it is registered.
func Compile[O, S any](spec *Spec[O, S]) *orchestrator.Protocol {
	k := &kit[O, S]{spec: spec, opts: map[string]*parsed[O]{}}
	nodes := make([]*orchestrator.Node, 0, len(spec.Nodes))
	for _, n := range spec.Nodes {
		nodes = append(nodes, k.node(n))
	}
	p := &orchestrator.Protocol{
		Name: spec.Name, Description: spec.Description, Roles: spec.Roles, Start: spec.Start, Nodes: nodes,
		MaxSteps: spec.MaxSteps, Pipelined: spec.Pipelined, RoleGuard: spec.RoleGuard, Tools: spec.Tools,
		Deliverables: spec.Deliverables,
		CheckOutput:  spec.CheckOutput,
	}
	if _, none := any(new(O)).(*None); !none {
		p.Options = func(raw json.RawMessage) (json.RawMessage, error) {
			o, err := k.Options(raw)
			if err != nil {
				return nil, err
			}
			return json.Marshal(o)
		}
	}
	if spec.Init != nil {
		p.Init = func(_ context.Context, in orchestrator.InitInput) (json.RawMessage, error) {
			o, err := k.Options(in.Options)
			if err != nil {
				return nil, orchestrator.Permanent(err)
			}
			s, err := spec.Init(o, in)
			if err != nil {
				return nil, err
			}
			return Encode(s)
		}
	}
	return p
}

// None is the options of a protocol that takes none: its debates accept
// only empty options ({}).
type None struct{}

// maxCachedOptions bounds the options a compiled protocol keeps parsed.
const maxCachedOptions = 512

type kit[O, S any] struct {
	spec *Spec[O, S]
	mu   sync.Mutex
	opts map[string]*parsed[O] // raw options → parsed, shared read-only
}

// parsed is one options text parsed once, however many nodes ask at once.
type parsed[O any] struct {
	once sync.Once
	o    *O
	err  error
}

// Options decodes raw strictly onto the defaults and checks them; a
// debate's nodes share one parse of its options. Errors are
// *debate.ValidationError under "options".
func (k *kit[O, S]) Options(raw json.RawMessage) (*O, error) {
	k.mu.Lock()
	p, ok := k.opts[string(raw)] // no copy of raw for the lookup
	if !ok {
		if len(k.opts) >= maxCachedOptions {
			clear(k.opts)
		}
		p = &parsed[O]{}
		k.opts[string(raw)] = p
	}
	k.mu.Unlock()
	p.once.Do(func() { p.o, p.err = ParseOptions(raw, k.spec.Defaults, k.spec.Check) })
	return p.o, p.err
}

// ParseOptions decodes raw (empty means {}) strictly, unknown members
// refused, onto defaults (nil: the zero O) and checks the result with
// check (nil: none). Returns a *debate.ValidationError (errors.Is
// debate.ErrInvalid) naming every bad field under "options".
func ParseOptions[O any](raw json.RawMessage, defaults func() O, check func(*O, *debate.Violations)) (*O, error) {
	o := new(O)
	if defaults != nil {
		*o = defaults()
	}
	var v debate.Violations
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := DecodeStrict(raw, o); err != nil {
			if unknown, known := unknownMembers[O](raw); len(unknown) > 0 {
				what := "unknown member"
				if len(unknown) > 1 {
					what += "s"
				}
				members := "there are none"
				if len(known) > 0 {
					members = "the members are " + strings.Join(known, ", ")
				}
				v.Add("options", "%s %s (%s)", what, strings.Join(unknown, ", "), members)
			} else {
				v.Add("options", "%v", err)
			}
			return nil, v.Err()
		}
	}
	if check != nil {
		check(o, &v)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return o, nil
}

// State decodes a node's state onto NewState's.
func (k *kit[O, S]) State(raw json.RawMessage) (*S, error) {
	s := new(S)
	if k.spec.NewState != nil {
		s = k.spec.NewState()
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, s); err != nil {
			return nil, fmt.Errorf("%s: state: %w", k.spec.Name, err)
		}
	}
	return s, nil
}

func (k *kit[O, S]) node(n *Node[O, S]) *orchestrator.Node {
	on := &orchestrator.Node{Name: n.Name, Actor: n.Actor, Edges: n.Edges, Timeout: n.Timeout,
		MaxAttempts: n.MaxAttempts, EndsRound: n.EndsRound}
	if n.Run != nil {
		on.Run = func(ctx context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
			o, err := k.Options(in.Options)
			if err != nil {
				return nil, orchestrator.Permanent(err)
			}
			s, err := k.State(in.State)
			if err != nil {
				return nil, orchestrator.Permanent(err)
			}
			return n.Run(ctx, &Turn[O, S]{NodeInput: in, Opts: o, State: s})
		}
	}
	for _, b := range n.Branches {
		on.Branches = append(on.Branches, k.node(b))
	}
	if n.Merge != nil {
		on.Merge = func(raw json.RawMessage, outs []*orchestrator.NodeOutput) (json.RawMessage, error) {
			s, err := k.State(raw)
			if err != nil {
				return nil, err
			}
			if err := n.Merge(s, outs); err != nil {
				return nil, err
			}
			return Encode(s)
		}
	}
	if n.Next != nil {
		on.Next = func(raw json.RawMessage) (string, error) {
			s, err := k.State(raw)
			if err != nil {
				return "", err
			}
			return n.Next(s), nil
		}
	}
	return on
}

// Branches decodes the outputs of a parallel group's branches, in declared
// order, into T (a branch's result type), skipping the branches that
// returned no state (one that stopped the debate).
func Branches[T any](outs []*orchestrator.NodeOutput) ([]T, error) {
	res := make([]T, 0, len(outs))
	for _, o := range outs {
		if o == nil || o.State == nil {
			continue
		}
		var t T
		if err := json.Unmarshal(o.State, &t); err != nil {
			return nil, fmt.Errorf("protocol: branch result: %w", err)
		}
		res = append(res, t)
	}
	return res, nil
}

// unknownMembers names, as "options.NAME", every member of the object raw
// that O (a struct) has no field for, and lists O's members; nil when raw
// is not an object, O is not a plain struct or every member is known (the
// decoder's error is then about something else). Names match as
// encoding/json matches them: the JSON name, regardless of case.
func unknownMembers[O any](raw json.RawMessage) (unknown, known []string) {
	t := reflect.TypeFor[O]()
	if t.Kind() != reflect.Struct {
		return nil, nil
	}
	for f := range t.Fields() {
		if f.Anonymous {
			return nil, nil // embedded fields: leave it to the decoder
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
			continue
		case name == "":
			name = f.Name
		}
		known = append(known, name)
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return nil, nil
	}
	for m := range members {
		if !slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, m) }) {
			unknown = append(unknown, fmt.Sprintf("%q", "options."+m))
		}
	}
	slices.Sort(unknown)
	return unknown, known
}
