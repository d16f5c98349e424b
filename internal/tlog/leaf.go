package tlog

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/debated/debated/internal/debate"
)

// Kinds of leaves.
const (
	// KindStep is a committed debate step: its subject is the debate id,
	// Seq and Hash those of the step's last ledger event.
	KindStep = "step"
	// KindDeal is a deal audit event: its subject is the deal id, Seq and
	// Hash those of the event in the deal's chained audit log.
	KindDeal = "deal"
)

// leafHeader is the first line of every encoded leaf; a new encoding gets
// a new header, so no two encodings can collide.
const leafHeader = "debated/tlog/leaf/v1"

// ErrInvalidLeaf: a leaf that cannot be encoded, or bytes that are not an
// encoded leaf.
var ErrInvalidLeaf = errors.New("tlog: invalid leaf")

// Leaf is one entry of a tenant's log: the head of a debate (or a deal's
// audit log) after a committed step.
type Leaf struct {
	Kind    string // KindStep or KindDeal
	Subject string // the debate id (KindStep) or the deal id (KindDeal)
	Seq     int64  // the seq of the last event, > 0
	Hash    string // that event's hash: 64 lowercase hex digits
}

// Validate returns an error wrapping ErrInvalidLeaf if l cannot be encoded.
func (l Leaf) Validate() error {
	switch {
	case l.Kind != KindStep && l.Kind != KindDeal:
		return fmt.Errorf("%w: kind %q", ErrInvalidLeaf, l.Kind)
	case l.Subject == "" || len(l.Subject) > 256 || !utf8.ValidString(l.Subject) ||
		strings.ContainsAny(l.Subject, "\n\x00"):
		return fmt.Errorf("%w: subject %q", ErrInvalidLeaf, l.Subject)
	case l.Seq <= 0:
		return fmt.Errorf("%w: seq %d", ErrInvalidLeaf, l.Seq)
	case !debate.IsHashHex(l.Hash):
		return fmt.Errorf("%w: hash %q is not 64 lowercase hex digits", ErrInvalidLeaf, l.Hash)
	}
	return nil
}

// Encode returns the leaf's bytes, the input of its RFC 6962 leaf hash:
//
//	debated/tlog/leaf/v1\n<kind>\n<subject>\n<seq in decimal>\n<hash>\n
//
// Returns an error wrapping ErrInvalidLeaf if l does not validate.
func (l Leaf) Encode() ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(leafHeader) + len(l.Kind) + len(l.Subject) + 20 + 64 + 5)
	b.WriteString(leafHeader)
	b.WriteByte('\n')
	b.WriteString(l.Kind)
	b.WriteByte('\n')
	b.WriteString(l.Subject)
	b.WriteByte('\n')
	b.WriteString(strconv.FormatInt(l.Seq, 10))
	b.WriteByte('\n')
	b.WriteString(l.Hash)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// ParseLeaf is the inverse of Encode. Returns an error wrapping
// ErrInvalidLeaf for anything Encode would not have produced.
func ParseLeaf(data []byte) (Leaf, error) {
	parts := strings.Split(string(data), "\n")
	if len(parts) != 6 || parts[0] != leafHeader || parts[5] != "" {
		return Leaf{}, fmt.Errorf("%w: not a %s leaf", ErrInvalidLeaf, leafHeader)
	}
	seq, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil || strconv.FormatInt(seq, 10) != parts[3] {
		return Leaf{}, fmt.Errorf("%w: seq %q", ErrInvalidLeaf, parts[3])
	}
	l := Leaf{Kind: parts[1], Subject: parts[2], Seq: seq, Hash: parts[4]}
	if err := l.Validate(); err != nil {
		return Leaf{}, err
	}
	return l, nil
}

// LeafHash returns the leaf's RFC 6962 hash, SHA-256(0x00 || Encode()).
func (l Leaf) LeafHash() ([]byte, error) {
	data, err := l.Encode()
	if err != nil {
		return nil, err
	}
	return rfc6962.DefaultHasher.HashLeaf(data), nil
}

// IndexedLeaf is a leaf with its index in the log.
type IndexedLeaf struct {
	Index uint64
	Leaf  Leaf
}
