// Package orchestrator is the graph engine of debated: it runs a debate
// protocol (a graph of nodes over roles) one node at a time and turns each
// node into one atomic commit (debate.StepCommit) of sealed ledger events,
// a checkpoint and the debate's new status.
//
// The package is pure logic. It reads no clock, no randomness, no
// environment and no database: the clock, the jitter source, the sleep
// function and the event sealer (the ledger) are injected through Config,
// and the caller (the job runner) stores what Step returns. The same debate,
// checkpoint, protocol and clock therefore give byte-identical commits,
// parallel groups included, whatever the goroutine scheduling.
//
// # Protocols
//
// A Protocol is a set of named Nodes with declared edges. A task node runs a
// NodeFunc; a parallel group runs its branches concurrently on the same input
// state and merges their outputs in declared order. A node's Next function
// picks the next node among its declared Edges ("" ends the debate). The
// protocol state is an opaque JSON value: the engine stores it in the
// checkpoint in canonical (RFC 8785) form and hashes it (hex SHA-256) before
// and after every node, which gives the audit artifacts of seed 001 §7.
//
// # Steps
//
// Engine.Step executes exactly one node. Its commit holds, sealed in order
// after the ledger's head:
//
//	debate.started        first step only
//	node.started
//	node.retry …          one per failed attempt that was retried
//	the node's events     a group's: each branch's, in declared order
//	node.completed        hashes, event counts, claims/defects, stop decision
//	round.completed       when the node ends a round
//	human_gate.created    when the node asks for a human gate
//	debate.stopped        when the node stops the debate or the graph ends
//
// or, when the node exhausts its attempts, node.failed and debate.stopped
// with status needs_review (seed 004). A node's events are all in its one
// commit: a crash in the middle of a node loses nothing committed and
// duplicates nothing; the node simply runs again on resume (at-least-once
// execution, exactly-once commit). Cancelling Step's context (shutdown)
// returns the context's error and no commit.
//
// Engine.Abort and Engine.ResolveGate build the commits of the operator's
// two acts on a debate: aborting it, and resolving a human gate.
package orchestrator
