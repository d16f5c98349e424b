package docs_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplit checks that a block is cut into the commands a shell would run:
// continuation lines, quotes over several lines and here-documents stay
// in their command; comments and blank lines are no commands.
func TestSplit(t *testing.T) {
	block := strings.Split(`# a comment
export A=1   # trailing comment
./bin/debatectl debate create --deal X \
  --option task='{"steps":[
     {"id":"a"}]}' --option n=1

cat <<'EOF'
{"x": "# not a comment"}
EOF
echo "it's \"quoted\"" done`, "\n")
	got := split(block, 10)
	var lines []int
	var texts []string
	for _, c := range got {
		lines = append(lines, c.line)
		texts = append(texts, c.text)
	}
	require.Equal(t, []int{11, 12, 16, 19}, lines)
	require.Equal(t, "export A=1   # trailing comment", texts[0])
	require.Contains(t, texts[1], `{"id":"a"}]}' --option n=1`)
	require.Equal(t, "cat <<'EOF'\n{\"x\": \"# not a comment\"}\nEOF", texts[2])
	require.Equal(t, `echo "it's \"quoted\"" done`, texts[3])
}

func TestParseDirectives(t *testing.T) {
	md := "text\n\n<!-- docs-test: skip (needs a model) -->\n```sh\nmake run\n```\n\n```sh\nls\n```\n\n```json\n{}\n```\n"
	blocks := parse(t, "x.md", md)
	require.Len(t, blocks, 2, "only shell blocks")
	require.Equal(t, "skip", blocks[0].directive)
	require.Equal(t, 4, blocks[0].line)
	require.Empty(t, blocks[1].directive)
	require.Equal(t, []command{{line: 9, text: "ls"}}, blocks[1].commands)
}
