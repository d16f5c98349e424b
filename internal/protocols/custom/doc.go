// Package custom runs the debate protocols tenants register as data
// (issue 16 §2): a Document (YAML or JSON) names roles with their prompts
// and output schemas, a graph of call, parallel, join, judge and loop
// nodes, stop rules from a fixed vocabulary, gates (schema, No-Free-Facts,
// Muḥāsabah), the server tools each role may call and the deliverables'
// shape. Parse decodes it strictly and validates it (every problem named by
// its path in the document); Compile turns it into an orchestrator.Protocol
// whose roles are model-backed only (llm.Caller.JSON) and whose tool calls
// go through tools.Invoker under the document's permission matrix; Catalog
// stores documents per tenant, resolves a debate's NAME@VERSION for the
// engine and refuses to run one without a model.
//
// Nothing in a document executes code, reaches the network or reads another
// tenant's data: node kinds, stop rules, gates and tools are the server's
// own, schemas are a subset the server checks itself (no $ref), the deal a
// role sees and the tools it calls are the debate's, read as its tenant.
// See docs/protocols-as-data.md.
package custom
