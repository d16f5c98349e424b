package orchestrator

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecodeRefsMatchesUnmarshal: decodeRefs reads a payload's ids as
// json.Unmarshal into idRefs does.
func TestDecodeRefsMatchesUnmarshal(t *testing.T) {
	for _, p := range []string{
		`{}`, `{"claim_id":"c1"}`, `{"claim_ids":["a","b"],"defect_id":"d","defect_ids":["x"]}`,
		`{"x":{"claim_id":"nested"},"claim_id":"top"}`, `{"claim_id":1,"claim_ids":["a",2,"c"],"defect_id":"d"}`,
		`{"claim_id":"a","claim_id":"b"}`, `{"claim_ids":["a"],"claim_ids":null}`, `{"claim_ids":["a","b"],"claim_ids":["c"]}`, "{\"claim_id\":\"\xff\"}", `{"claim_id":null}`,
		`{"CLAIM_ID":"upper","Defect_IDs":["mixed"]}`, `{"defect_idſ":["long s"]}`, `{"claim\u005fid":"escaped"}`,
		`{"claim_id":"a"`, `{"claim_id":"a"}x`, `[{"claim_id":"a"}]`, `{"claim_ids":{"a":1},"defect_ids":"s"}`,
		`{"claim_id":"\u00e9\n","claim_ids":["\"q\""]}`, `{"claim_idx":"no","xclaim_id":"no"}`,
	} {
		var want idRefs
		_ = json.Unmarshal([]byte(p), &want)
		require.Equal(t, want, decodeRefs([]byte(p)), p)
	}
}

func FuzzDecodeRefsMatchesUnmarshal(f *testing.F) {
	f.Add([]byte(`{"claim_id":"c1","claim_ids":["a",2],"defect_id":"d","defect_ids":["x"],"other":{"claim_id":"n"}}`))
	f.Add([]byte(`{"CLAIM_ID":"u","claim\u005fids":["e"]}`))
	f.Fuzz(func(t *testing.T, p []byte) {
		var want idRefs
		_ = json.Unmarshal(p, &want)
		require.Equal(t, want, decodeRefs(p), "%q", p)
	})
}
