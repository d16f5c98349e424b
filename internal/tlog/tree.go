package tlog

import (
	"errors"
	"fmt"
	"slices"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// HashSize is the size of every hash of the tree (SHA-256).
const HashSize = 32

// ErrInvalidProof: a proof, a root or a tree size that does not check.
var ErrInvalidProof = errors.New("tlog: proof does not verify")

// NodeID names a node of the tree: Level 0 are the leaves; the node
// (Level, Index) covers leaves [Index·2^Level, (Index+1)·2^Level). Stores
// keep only such perfect-subtree nodes; every proof is computed from
// them.
type NodeID = compact.NodeID

// Node is a node of the tree with its hash.
type Node struct {
	ID   NodeID
	Hash []byte
}

// Head is a tree head: the size of a tenant's log and its root hash.
type Head struct {
	Size uint64
	Root []byte
}

var factory = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}

// EmptyRoot is the root hash of the empty tree, SHA-256 of nothing.
func EmptyRoot() []byte { return rfc6962.DefaultHasher.EmptyRoot() }

// HashChildren is RFC 6962's interior node hash, SHA-256(0x01 || l || r).
func HashChildren(l, r []byte) []byte { return rfc6962.DefaultHasher.HashChildren(l, r) }

// BorderIDs returns the nodes whose hashes Append needs to extend a tree
// of size leaves: the perfect subtrees that cover [0, size), left to right
// (at most one per bit of size).
func BorderIDs(size uint64) []NodeID { return compact.RangeNodes(0, size, nil) }

// Append extends a tree of size leaves, whose border hashes (BorderIDs(size),
// in that order) are border, by leafHashes. It returns every perfect-subtree
// node the new leaves complete (the leaves themselves included), which a
// store keeps for proofs and for the next Append, and the new head.
// Returns an error if border has the wrong length or a hash the wrong size.
func Append(size uint64, border [][]byte, leafHashes [][]byte) ([]Node, Head, error) {
	for _, h := range border {
		if len(h) != HashSize {
			return nil, Head{}, fmt.Errorf("tlog: border hash of %d bytes", len(h))
		}
	}
	r, err := factory.NewRange(0, size, slices.Clone(border))
	if err != nil {
		return nil, Head{}, fmt.Errorf("tlog: border of a tree of %d: %w", size, err)
	}
	nodes := make([]Node, 0, 2*len(leafHashes))
	visit := func(id NodeID, hash []byte) { nodes = append(nodes, Node{ID: id, Hash: hash}) }
	for _, h := range leafHashes {
		if len(h) != HashSize {
			return nil, Head{}, fmt.Errorf("tlog: leaf hash of %d bytes", len(h))
		}
		if err := r.Append(h, visit); err != nil {
			return nil, Head{}, fmt.Errorf("tlog: append: %w", err)
		}
	}
	root, err := rootOf(r)
	if err != nil {
		return nil, Head{}, err
	}
	return nodes, Head{Size: r.End(), Root: root}, nil
}

// Root returns the root hash of a tree of size leaves from its border.
func Root(size uint64, border [][]byte) ([]byte, error) {
	r, err := factory.NewRange(0, size, slices.Clone(border))
	if err != nil {
		return nil, fmt.Errorf("tlog: border of a tree of %d: %w", size, err)
	}
	return rootOf(r)
}

func rootOf(r *compact.Range) ([]byte, error) {
	if r.End() == 0 {
		return EmptyRoot(), nil
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		return nil, fmt.Errorf("tlog: root: %w", err)
	}
	return root, nil
}

// Plan says which stored nodes make a proof and how to combine them.
type Plan struct{ nodes proof.Nodes }

// InclusionPlan plans the inclusion proof of leaf index in the tree of size
// leaves (RFC 9162 §2.1.3). Returns an error unless index < size.
func InclusionPlan(index, size uint64) (Plan, error) {
	n, err := proof.Inclusion(index, size)
	if err != nil {
		return Plan{}, fmt.Errorf("tlog: %w", err)
	}
	return Plan{n}, nil
}

// ConsistencyPlan plans the consistency proof between the trees of size1
// and size2 leaves (RFC 9162 §2.1.4). Returns an error unless
// size1 ≤ size2.
func ConsistencyPlan(size1, size2 uint64) (Plan, error) {
	n, err := proof.Consistency(size1, size2)
	if err != nil {
		return Plan{}, fmt.Errorf("tlog: %w", err)
	}
	return Plan{n}, nil
}

// IDs returns the perfect-subtree nodes whose hashes Proof needs, in order.
func (p Plan) IDs() []NodeID { return slices.Clone(p.nodes.IDs) }

// Proof combines the hashes of IDs() (in that order) into the proof.
func (p Plan) Proof(hashes [][]byte) ([][]byte, error) {
	out, err := p.nodes.Rehash(slices.Clone(hashes), HashChildren)
	if err != nil {
		return nil, fmt.Errorf("tlog: %w", err)
	}
	return out, nil
}

// VerifyInclusion checks that leafHash is leaf index of the tree of size
// leaves whose root is root. Returns an error wrapping ErrInvalidProof if
// not.
func VerifyInclusion(index, size uint64, leafHash []byte, proofHashes [][]byte, root []byte) error {
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, index, size, leafHash, proofHashes, root); err != nil {
		return fmt.Errorf("%w: inclusion of leaf %d in a tree of %d: %w", ErrInvalidProof, index, size, err)
	}
	return nil
}

// VerifyConsistency checks that the tree of size2 leaves with root2 extends
// the tree of size1 leaves with root1. Returns an error wrapping
// ErrInvalidProof if not (a log that was rewritten or cut short).
func VerifyConsistency(size1, size2 uint64, proofHashes [][]byte, root1, root2 []byte) error {
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, size1, size2, proofHashes, root1, root2); err != nil {
		return fmt.Errorf("%w: consistency of tree %d with tree %d: %w", ErrInvalidProof, size1, size2, err)
	}
	return nil
}
