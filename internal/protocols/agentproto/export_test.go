package agentproto

// The lifecycle table's queries the tests read it with.

// Terminal reports whether state ends the lifecycle.
func Terminal(state string) bool {
	return state == StateCompleted || state == StateFailed || state == StateAborted
}

// Allowed reports whether the table has an edge from → to, whatever its
// guard.
func Allowed(from, to string) bool {
	_, ok := lifecycle[from][to]
	return ok
}

// DesignatedRole is the role that signs the transition from → to ("" when
// the table has no such edge).
func DesignatedRole(from, to string) string {
	return lifecycle[from][to].role
}
