// Package debate holds the domain of debated: tenants, API keys, the claim
// registry of a deal (claims, evidence items, spans, sanad chains, documents
// and calcs), the sentinel errors every layer branches on, and the tenant
// context helpers.
//
// It is the leaf of the dependency graph: it imports only the standard
// library, and every other package of ours may import it.
package debate
