package sanad

import (
	"fmt"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// chain is the transmission chain of one claim: the nodes of every sanad of
// the claim (normally one), with the edges between them. A node's
// predecessors are the nodes it consumes, named in its input_refs either by
// node id or by the evidence id another node outputs.
type chain struct {
	nodes []debate.ChainNode
	byID  map[string]int
	// producers maps an evidence id to the nodes whose output_ref it is.
	producers map[string][]int
	preds     [][]int
}

func newChain(sanads []*debate.Sanad) *chain {
	c := &chain{byID: map[string]int{}, producers: map[string][]int{}}
	for _, s := range sanads {
		c.nodes = append(c.nodes, s.Chain...)
	}
	// Nodes in id order, so that every walk below (and every message it
	// writes) is the same whatever the order of the chain array.
	slices.SortStableFunc(c.nodes, func(a, b debate.ChainNode) int { return strings.Compare(a.ID, b.ID) })
	c.nodes = slices.CompactFunc(c.nodes, func(a, b debate.ChainNode) bool { return a.ID == b.ID && a.ID != "" })
	for i, n := range c.nodes {
		c.byID[n.ID] = i
	}
	for i, n := range c.nodes {
		if n.OutputRef != "" {
			c.producers[n.OutputRef] = append(c.producers[n.OutputRef], i)
		}
	}
	c.preds = make([][]int, len(c.nodes))
	for i, n := range c.nodes {
		for _, ref := range n.InputRefs {
			if j, ok := c.byID[ref]; ok {
				c.preds[i] = append(c.preds[i], j)
			}
			c.preds[i] = append(c.preds[i], c.producers[ref]...)
		}
		slices.Sort(c.preds[i])
		c.preds[i] = slices.Compact(c.preds[i])
	}
	return c
}

// segment is the provenance of an evidence item in the chain: the nodes
// that produced it and everything upstream of them, and the input
// references those nodes consume.
func (c *chain) segment(evID string) (nodes map[string]bool, refs map[string]bool) {
	nodes, refs = map[string]bool{}, map[string]bool{}
	stack := slices.Clone(c.producers[evID])
	seen := map[int]bool{}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		nodes[c.nodes[i].ID] = true
		for _, r := range c.nodes[i].InputRefs {
			refs[r] = true
		}
		stack = append(stack, c.preds[i]...)
	}
	return nodes, refs
}

// independent reports whether evidence items a and b are independent (seed
// 001 §6.5, SANAD.md): different upstream_origin_id, and provenance
// segments sharing no node and no input reference, and neither derived
// from the other. It says why not when they are not.
func (c *chain) independent(a, b *debate.EvidenceItem) (bool, string) {
	if a.UpstreamOriginID == b.UpstreamOriginID {
		return false, fmt.Sprintf("same upstream origin %q", a.UpstreamOriginID)
	}
	na, ra := c.segment(a.ID)
	nb, rb := c.segment(b.ID)
	for _, n := range sortedKeys(na) {
		if nb[n] {
			return false, fmt.Sprintf("share chain node %s", n)
		}
	}
	for _, r := range sortedKeys(ra) {
		if rb[r] {
			return false, fmt.Sprintf("share input reference %s", r)
		}
	}
	if ra[b.ID] || rb[a.ID] {
		return false, "one is derived from the other"
	}
	return true, ""
}

// groups counts independent groups among items: items that are not
// independent of each other (same origin, shared node or input reference,
// derivation) are joined, transitively.
func (c *chain) groups(items []*debate.EvidenceItem) int {
	parent := make([]int, len(items))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) { parent[find(i)] = find(j) }
	// Join through shared keys rather than comparing every pair: origin,
	// node and reference keys map to the first item that had them.
	owner := map[string]int{}
	join := func(key string, i int) {
		if j, ok := owner[key]; ok {
			union(i, j)
			return
		}
		owner[key] = i
	}
	for i, it := range items {
		join("o\x00"+it.UpstreamOriginID, i)
		nodes, refs := c.segment(it.ID)
		for n := range nodes {
			join("n\x00"+n, i)
		}
		for r := range refs {
			join("r\x00"+r, i)
		}
		join("r\x00"+it.ID, i) // derived items consume this id
	}
	roots := map[int]bool{}
	for i := range items {
		roots[find(i)] = true
	}
	return len(roots)
}

// brokenChain checks a claim's sanads for the BROKEN_CHAIN defects: a
// reference to an evidence item or node that does not exist (primary,
// corroborating ids, node inputs and outputs), a cycle, an orphan node (one
// that does not lead to the claim, its primary or a corroborator) and a
// chain without a root (no SOURCE or EXTRACTION node that consumes no other
// node). It returns the problems found and the references that show them.
// An empty chain is not broken: a claim without any chain is judged by
// MISSING_LINK.
func (g *grader) brokenChain(cl *debate.Claim, sanads []*debate.Sanad, c *chain) (problems []string, refs []string) {
	resolves := func(ref string) bool {
		if _, ok := g.ev[ref]; ok {
			return true
		}
		if _, ok := c.byID[ref]; ok {
			return true
		}
		_, ok := g.claims[ref]
		return ok
	}
	addRef := func(r string) {
		if !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	anchors := map[string]bool{cl.ID: true}
	for _, s := range sanads {
		if s.PrimaryEvidenceID != "" {
			anchors[s.PrimaryEvidenceID] = true
			if _, ok := g.ev[s.PrimaryEvidenceID]; !ok {
				problems = append(problems, fmt.Sprintf("primary evidence %s does not exist", s.PrimaryEvidenceID))
				addRef(s.PrimaryEvidenceID)
			}
		}
		for _, id := range s.CorroboratingEvidenceIDs {
			anchors[id] = true
			if _, ok := g.ev[id]; !ok {
				problems = append(problems, fmt.Sprintf("corroborating evidence %s does not exist", id))
				addRef(id)
			}
		}
	}
	for _, n := range c.nodes {
		for _, r := range n.InputRefs {
			if !resolves(r) {
				problems = append(problems, fmt.Sprintf("node %s consumes %s, which does not exist", n.ID, r))
				addRef(r)
			}
		}
		if n.OutputRef != "" && !resolves(n.OutputRef) {
			problems = append(problems, fmt.Sprintf("node %s outputs %s, which does not exist", n.ID, n.OutputRef))
			addRef(n.OutputRef)
		}
	}
	if len(c.nodes) == 0 {
		return problems, refs
	}

	// Cycles: depth-first search over predecessor edges.
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(c.nodes))
	var cyc []string
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		for _, j := range c.preds[i] {
			switch color[j] {
			case grey:
				cyc = append(cyc, c.nodes[j].ID)
			case white:
				visit(j)
			}
		}
		color[i] = black
	}
	for i := range c.nodes {
		if color[i] == white {
			visit(i)
		}
	}
	if len(cyc) > 0 {
		slices.Sort(cyc)
		cyc = slices.Compact(cyc)
		problems = append(problems, fmt.Sprintf("the chain has a cycle through node %s", cyc[0]))
		for _, id := range cyc {
			addRef(id)
		}
	}

	// Root: an origin step that consumes no other node.
	hasRoot := false
	for i, n := range c.nodes {
		if len(c.preds[i]) == 0 && (n.Type == debate.ChainNodeSource || n.Type == debate.ChainNodeExtraction) {
			hasRoot = true
			break
		}
	}
	if !hasRoot {
		problems = append(problems, "the chain has no root (no SOURCE or EXTRACTION node that consumes no other node)")
	}

	// Orphans: nodes from which neither the claim nor its cited evidence is
	// reached. Walk upstream from the anchored nodes.
	reached := make([]bool, len(c.nodes))
	var stack []int
	for i, n := range c.nodes {
		if anchors[n.OutputRef] {
			stack = append(stack, i)
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if reached[i] {
			continue
		}
		reached[i] = true
		stack = append(stack, c.preds[i]...)
	}
	var orphans []string
	for i, n := range c.nodes {
		if !reached[i] {
			orphans = append(orphans, n.ID)
		}
	}
	if len(orphans) > 0 {
		slices.Sort(orphans)
		problems = append(problems, fmt.Sprintf("orphan node(s) %v lead to neither the claim nor its evidence", orphans))
		for _, id := range orphans {
			addRef(id)
		}
	}
	return problems, refs
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
