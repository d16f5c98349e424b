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
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/debated/debated/internal/canon"
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
	// PassState hands the state a node (Init, Run through Save, Merge)
	// leaves, encoded in RFC 8785 form, to what this process gives those
	// bytes next instead of decoding them, when decoding them onto
	// NewState's gives that value exactly (canon.DecodesOnto): the debate's
	// next Run, or a group's Merge and an edge's Next (given no debate, they
	// take a state of those bytes whichever debate left it: it is the same
	// value). Once only: a retry or another process decodes. A protocol
	// that sets it keeps no reference to a state once Save has encoded it,
	// changes in a state only what the state owns (not what it shares with
	// the deal or a tool result), and its Next does not change the state.
	PassState bool
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
	// pass: the kit passes the state Save encodes (saved, as raw) on.
	pass  bool
	raw   []byte
	saved *S
}

// Save returns the output with the turn's state encoded, the events and
// the stop.
func (t *Turn[O, S]) Save(events []orchestrator.Emit, stop *orchestrator.Stop) (*orchestrator.NodeOutput, error) {
	st, err := encode(t.State, t.pass)
	if err != nil {
		return nil, err
	}
	t.raw, t.saved = st, t.State
	return &orchestrator.NodeOutput{State: st, Canonical: t.pass, Events: events, Stop: stop}, nil
}

// Encode is the state codec's encoder (any value as a node's JSON state).
func Encode(v any) (json.RawMessage, error) { return encode(v, false) }

// encode is Encode, in RFC 8785 form if canonical.
func encode(v any, canonical bool) (json.RawMessage, error) {
	marshal := json.Marshal
	if canonical {
		marshal = canon.Marshal
	}
	b, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("protocol: encode state: %w", err)
	}
	return b, nil
}

// Compile returns the orchestrator protocol of spec. The engine validates
// it when it is registered.
func Compile[O, S any](spec *Spec[O, S]) *orchestrator.Protocol {
	k := &kit[O, S]{spec: spec, opts: map[string]*parsed[O]{}, base: newState(spec), seed: maphash.MakeSeed(),
		states: map[uint64][]*passed[O, S]{}}
	nodes := make([]*orchestrator.Node, 0, len(spec.Nodes))
	for _, n := range spec.Nodes {
		nodes = append(nodes, k.node(n, false))
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
			raw, err := encode(s, spec.PassState)
			if err == nil {
				k.pass(in.TenantID+"\x00"+in.DebateID, raw, s, nil)
			}
			return raw, err
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
	// The states passed on (Spec.PassState) by their text's hash (Merge
	// and Next are given no debate); base is NewState's, read only.
	base   *S
	seed   maphash.Seed
	pmu    sync.Mutex
	states map[uint64][]*passed[O, S]
}

// passed is a state left for the next node: decoding raw onto NewState's
// gives s; next is node's Next(s).
type passed[O, S any] struct {
	debate string
	raw    []byte
	hash   uint64
	s      *S
	node   *Node[O, S]
	next   string
}

// maxPassed bounds the states a compiled protocol keeps passed on (about
// one a debate running here: the next node takes it).
const maxPassed = 1024

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
			} else if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && te.Field != "" {
				v.Add("options."+te.Field, "must be %s, not a JSON %s", jsonKind(te.Type), te.Value)
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

// jsonKind says what JSON value decodes into t, as a person would.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

func newState[O, S any](spec *Spec[O, S]) *S {
	if spec.NewState != nil {
		return spec.NewState()
	}
	return new(S)
}

// State decodes a node's state onto NewState's.
func (k *kit[O, S]) State(raw json.RawMessage) (*S, error) {
	s := newState(k.spec)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, s); err != nil {
			return nil, fmt.Errorf("%s: state: %w", k.spec.Name, err)
		}
	}
	return s, nil
}

func (k *kit[O, S]) node(n *Node[O, S], branch bool) *orchestrator.Node {
	on := &orchestrator.Node{Name: n.Name, Actor: n.Actor, Edges: n.Edges, Timeout: n.Timeout,
		MaxAttempts: n.MaxAttempts, EndsRound: n.EndsRound}
	pass := k.spec.PassState && !branch // a branch's output is its own type
	if n.Run != nil {
		on.Run = func(ctx context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
			o, err := k.Options(in.Options)
			if err != nil {
				return nil, orchestrator.Permanent(err)
			}
			key := in.TenantID + "\x00" + in.DebateID
			var s *S
			if p := k.find(pass, in.State, func(p *passed[O, S]) bool { return p.debate == key }, true); p != nil {
				s = p.s
			} else if s, err = k.State(in.State); err != nil {
				return nil, orchestrator.Permanent(err)
			}
			t := &Turn[O, S]{NodeInput: in, Opts: o, State: s, pass: pass}
			out, err := n.Run(ctx, t)
			if pass && err == nil && out != nil && out.Stop == nil && len(t.raw) > 0 && len(out.State) == len(t.raw) &&
				&out.State[0] == &t.raw[0] {
				k.pass(key, t.raw, t.saved, n)
			}
			return out, err
		}
	}
	for _, b := range n.Branches {
		on.Branches = append(on.Branches, k.node(b, true))
	}
	if n.Merge != nil {
		on.Merge = func(raw json.RawMessage, outs []*orchestrator.NodeOutput) (json.RawMessage, error) {
			p := k.find(k.spec.PassState, raw, func(*passed[O, S]) bool { return true }, true)
			var s *S
			if p != nil {
				s = p.s
			} else {
				var err error
				if s, err = k.State(raw); err != nil {
					return nil, err
				}
			}
			if err := n.Merge(s, outs); err != nil {
				return nil, err
			}
			st, err := encode(s, k.spec.PassState)
			if err == nil && p != nil {
				k.pass(p.debate, st, s, n)
			}
			return st, err
		}
	}
	if n.Next != nil {
		on.Next = func(raw json.RawMessage) (string, error) {
			if p := k.find(k.spec.PassState, raw, func(p *passed[O, S]) bool { return p.node == n }, false); p != nil {
				return p.next, nil
			}
			s, err := k.State(raw)
			if err != nil {
				return "", err
			}
			return n.Next(s), nil
		}
	}
	return on
}

// pass leaves s, encoded as raw by node n (nil: Init), for the next node
// of debate key, if decoding raw gives it back and the debate goes on.
func (k *kit[O, S]) pass(key string, raw []byte, s *S, n *Node[O, S]) {
	if !k.spec.PassState || !canon.DecodesOnto(s, k.base) {
		return
	}
	p := &passed[O, S]{debate: key, raw: raw, hash: maphash.Bytes(k.seed, raw), s: s, node: n}
	if n != nil && n.Next != nil {
		defer func() { _ = recover() }() // a Next that panics does so again for the engine, which reports it
		p.next = n.Next(s)
	}
	if n != nil && (n.Next == nil && len(n.Edges) == 0 || n.Next != nil && p.next == "") {
		return // the debate ends
	}
	k.pmu.Lock()
	defer k.pmu.Unlock()
	if len(k.states) >= maxPassed {
		clear(k.states)
	}
	k.states[p.hash] = append(k.states[p.hash], p)
}

// find returns a state passed on whose text is raw and that ok accepts
// (several debates alike can leave the same text), and takes it (it is then
// the caller's) if take; nil if none or !pass.
func (k *kit[O, S]) find(pass bool, raw []byte, ok func(*passed[O, S]) bool, take bool) *passed[O, S] {
	if !pass {
		return nil
	}
	h := maphash.Bytes(k.seed, raw)
	k.pmu.Lock()
	defer k.pmu.Unlock()
	ps := k.states[h]
	for i, p := range ps {
		if ok(p) && bytes.Equal(p.raw, raw) {
			switch {
			case !take:
			case len(ps) == 1:
				delete(k.states, h)
			default:
				k.states[h] = slices.Delete(ps, i, i+1)
			}
			return p
		}
	}
	return nil
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
