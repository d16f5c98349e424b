package model

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"
	"text/template"

	"github.com/debated/debated/internal/gate"
)

// promptVersion is the version of the embedded templates; a change of a
// template's text comes with a new file and version.
const promptVersion = "v2"

//go:embed prompts/*.tmpl
var promptFS embed.FS

var roleTitles = map[string]string{
	"advocate":             "Advocate",
	"sanad_breaker":        "Sanad Breaker",
	"contradiction_finder": "Contradiction Finder",
	"risk_officer":         "Risk Officer",
	"arbiter":              "Arbiter",
}

// PromptID returns the id of role's system prompt template ("advocate.v2")
// and the hex SHA-256 of the template's text, for the caller to record with
// the role's outputs. Both are empty for an unknown role.
func PromptID(role string) (id, sha string) {
	src, err := promptFS.ReadFile(promptPath(role))
	if err != nil {
		return "", ""
	}
	sum := sha256.Sum256(src)
	return role + "." + promptVersion, hex.EncodeToString(sum[:])
}

func promptPath(role string) string { return "prompts/" + role + "." + promptVersion + ".tmpl" }

// promptData is all a system prompt may show: role-level constants, never
// deal text.
type promptData struct {
	Role, Title, Schema string
	Tools               []string
	Falsifiability      string
	Overconfidence      string
	MinDescription      int
}

// renderPrompt renders role's system prompt.
func renderPrompt(role string, toolNames []string) (string, error) {
	src, err := promptFS.ReadFile(promptPath(role))
	if err != nil {
		return "", fmt.Errorf("model: no prompt for role %q: %w", role, err)
	}
	t, err := template.New(role).Option("missingkey=error").
		Funcs(template.FuncMap{"join": strings.Join}).Parse(string(src))
	if err != nil {
		return "", fmt.Errorf("model: prompt %s: %w", role, err)
	}
	var buf bytes.Buffer
	err = t.Execute(&buf, promptData{
		Role: role, Title: roleTitles[role], Schema: schemaName, Tools: toolNames,
		Falsifiability: fmt.Sprintf("%.2f", gate.FalsifiabilityThreshold),
		Overconfidence: fmt.Sprintf("%.2f", gate.OverconfidenceThreshold),
		MinDescription: gate.MinChallengeDescription,
	})
	if err != nil {
		return "", fmt.Errorf("model: prompt %s: %w", role, err)
	}
	return strings.TrimSpace(buf.String()), nil
}
