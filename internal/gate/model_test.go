package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// TestAgentCannotWriteItsModelRecord: "model" is the backend's record of
// the calls behind an output (and what a restarted replica counts against
// the debate's token budget); an output that carries one is refused.
func TestAgentCannotWriteItsModelRecord(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(minimalDoc, `{"agent_id"`, `{"model":{"model":"m","calls":1,"prompt_tokens":-1000000,"completion_tokens":0},"agent_id"`, 1)
	require.NotEqual(t, minimalDoc, doc)
	_, err := ParseOutput([]byte(doc), debate.IDISRoles)
	var ve *debate.ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	fields := []string{}
	for _, v := range ve.Violations {
		fields = append(fields, v.Field)
	}
	require.Contains(t, strings.Join(fields, " "), "model")
}
