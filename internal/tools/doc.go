// Package tools runs the agent tools of a debate on the server side (seed
// 000 §4): lookup_claim, lookup_calc, search_evidence, flag_defect,
// request_human_review and query_enrichment.
//
// Agents only ask. An Invoker decides: for every call it checks that the
// tool exists, that the protocol's Matrix lets the role call it, that the
// role's per-round quota (Limits, seed 000 §6.2) is not spent and that the
// arguments are strict JSON naming only ids of this deal; only then does it
// run the tool. Every call, run or refused, yields an Audit record with the
// fields of the agent.tool_call event (seed 000 §6.1), which the protocol
// writes to the debate's ledger.
//
// The package reads a deal already loaded in memory (Deal) and, for
// search_evidence, an optional Searcher that a store implements; it opens no
// database and makes no network call. Effects that outlive the call
// (flagged defects, human review requests) are collected on the Invoker for
// the protocol to record: tools never write.
package tools
