package dealfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/testutil/gdbs"
)

func validFiles() map[string][]byte {
	return map[string][]byte{
		"deal.json": []byte(`{"deal_id":"d1","tenant_id":"other","company_name":"Acme","materiality_threshold":0.5,
			"created_at":"2026-01-05T09:00:00Z","unknown":{"x":1}}`),
		"claims.json": []byte(`{"claims":[{"claim_id":"c1","deal_id":"d1","claim_key":"K1","claim_class":"FINANCIAL",
			"claim_text":"ARR is $1M","predicate":"ARR(Acme, FY2025) = 1000000 USD",
			"value":{"value":1000000,"unit":"USD","currency":null,"as_of":"2025-12-31",
			"time_window":{"label":"FY2025","start_date":"2025-01-01","end_date":"2025-12-31"}},
			"materiality":"HIGH","ic_bound":true,"primary_span_id":null,"created_at":null}]}`),
		"evidence.json": []byte(`{"evidence_items":[{"evidence_id":"e1","source_span_id":"s1","source_grade":"C",
			"upstream_origin_id":"o1","retrieval_timestamp":"2026-01-05T09:10:00+02:00"}]}`),
		"spans.json": []byte(`{"spans":[{"span_id":"s1","document_id":"doc1","span_type":"PAGE_TEXT",
			"locator":{"page":2,"bbox":[1,2,3,4]},"text_excerpt":"ARR: $1M"}]}`),
		"sanads.json": []byte(`{"sanads":[{"sanad_id":"sa1","claim_id":"c1","primary_evidence_id":"e1",
			"corroborating_evidence_ids":null,"transmission_chain":[{"node_id":"n1","node_type":"SOURCE",
			"input_refs":[],"output_ref":"e1"},{"node_id":"n2","node_type":"CORROBORATION","input_refs":["e9"],"output_ref":"c1"}]}]}`),
		"documents.json": []byte(`{"documents":[{"document_id":"doc1","artifact_type":"PITCH_DECK","version_label":"v1",
			"ingested_at":"2026-01-05T09:00:00Z"}]}`),
		"calcs.json": []byte(`{"calc_sanads":[{"calc_id":"k1","calc_type":"RUNWAY","inputs":{"cash_balance":100,"monthly_burn":10},
			"input_span_ids":{},"input_claim_ids":["c1"]}]}`),
	}
}

func TestParseValid(t *testing.T) {
	t.Parallel()
	b, err := dealfile.Parse(validFiles())
	require.NoError(t, err)
	require.NoError(t, b.Validate())
	require.Equal(t, "d1", b.Deal.ID)
	require.Len(t, b.Claims, 1)
	c := b.Claims[0]
	require.Empty(t, c.PrimarySpanID, "null reads as empty")
	require.Empty(t, c.Value.Currency)
	require.Equal(t, "FY2025", c.Value.TimeWindow.Label)
	require.True(t, c.CreatedAt.IsZero())
	require.True(t, b.Evidence[0].RetrievalTimestamp.Equal(time.Date(2026, 1, 5, 7, 10, 0, 0, time.UTC)))
	require.Equal(t, int32(2), b.Spans[0].Locator.Page)
	require.Len(t, b.Sanads[0].Chain, 2)
	require.Equal(t, []string{"e9"}, b.Sanads[0].Chain[1].InputRefs, "dangling references are kept")
	require.Equal(t, debate.MustDecimal("100"), b.Calcs[0].Inputs["cash_balance"])
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		file  string
		data  string
		field string
	}{
		{"missing file", "spans.json", "", "spans.json"},
		{"syntax", "claims.json", `{"claims":[{"claim_id":"c1",}]}`, "claims.json"},
		{"claim id type", "claims.json", `{"claims":[{"claim_id":"a"},{"claim_id":"b"},{"claim_id":"c"},{"claim_id":7}]}`, "claims[3].claim_id"},
		{"grade type", "evidence.json", `{"evidence_items":[{"evidence_id":"e","source_grade":3}]}`, "evidence_items[0].source_grade"},
		{"page type", "spans.json", `{"spans":[{},{},{"span_id":"s","locator":{"page":"one"}}]}`, "spans[2].locator.page"},
		{"input refs type", "sanads.json", `{"sanads":[{"sanad_id":"x","transmission_chain":[{"node_id":"a"},{"node_id":"b","input_refs":"e1"}]}]}`, "sanads[0].transmission_chain[1].input_refs"},
		{"calc inputs type", "calcs.json", `{"calc_sanads":[{"calc_id":"k","inputs":{"cash":"lots"}}]}`, "calcs[0].inputs"},
		{"deal id type", "deal.json", `{"deal_id":12}`, "deal.deal_id"},
		{"bad time", "documents.json", `{"documents":[{"document_id":"d","ingested_at":"yesterday"}]}`, "documents[0].ingested_at"},
		{"wrapper type", "claims.json", `{"claims":{"claim_id":"c1"}}`, "claims"},
		{"not an object", "deal.json", `"deal"`, "deal"},
		{"claims not an object", "claims.json", `"claims"`, "claims.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := validFiles()
			if tt.data == "" {
				delete(files, tt.file)
			} else {
				files[tt.file] = []byte(tt.data)
			}
			_, err := dealfile.Parse(files)
			require.Error(t, err)
			require.True(t, errors.Is(err, debate.ErrInvalid))
			var ve *debate.ValidationError
			require.ErrorAs(t, err, &ve)
			fields := make([]string, 0, len(ve.Violations))
			for _, v := range ve.Violations {
				fields = append(fields, v.Field)
			}
			require.Contains(t, fields, tt.field, "violations: %v", ve.Violations)
		})
	}
}

func TestSyntaxErrorNamesOffset(t *testing.T) {
	t.Parallel()
	files := validFiles()
	files["claims.json"] = []byte(`{"claims": [}`)
	_, err := dealfile.Parse(files)
	require.ErrorContains(t, err, "claims.json")
	require.ErrorContains(t, err, "offset 13")
}

func TestBareArrayAccepted(t *testing.T) {
	t.Parallel()
	files := validFiles()
	files["documents.json"] = []byte(`[{"document_id":"d9","artifact_type":"FIN_MODEL"}]`)
	b, err := dealfile.Parse(files)
	require.NoError(t, err)
	require.Equal(t, "d9", b.Documents[0].ID)
}

func TestWriteLoadRoundTrip(t *testing.T) {
	t.Parallel()
	b, err := dealfile.Parse(validFiles())
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, b))
	got, err := dealfile.Load(dir)
	require.NoError(t, err)
	// Times come back in UTC; compare after normalising.
	b.Evidence[0].RetrievalTimestamp = b.Evidence[0].RetrievalTimestamp.UTC()
	b.Sanads[0].CorroboratingEvidenceIDs = []string{}
	b.Calcs[0].InputSpanIDs = map[string]string{}
	require.Equal(t, b, got)

	again, err := dealfile.Encode(got)
	require.NoError(t, err)
	first, err := dealfile.Encode(b)
	require.NoError(t, err)
	require.Equal(t, first, again, "encoding is deterministic")
}

func TestWriteWithoutCalcs(t *testing.T) {
	t.Parallel()
	files := validFiles()
	delete(files, "calcs.json")
	b, err := dealfile.Parse(files)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, b))
	_, err = os.Stat(filepath.Join(dir, "calcs.json"))
	require.True(t, errors.Is(err, os.ErrNotExist))
	got, err := dealfile.Load(dir)
	require.NoError(t, err)
	require.Empty(t, got.Calcs)
}

func TestLoadMissingDir(t *testing.T) {
	t.Parallel()
	_, err := dealfile.Load(filepath.Join(t.TempDir(), "nope"))
	require.ErrorIs(t, err, debate.ErrInvalid)
	require.ErrorContains(t, err, "deal.json: is missing")
}

func TestLoadGDBS(t *testing.T) {
	t.Parallel()
	root := gdbs.Dir(t)
	deals, err := filepath.Glob(filepath.Join(root, "deals", "deal_*"))
	require.NoError(t, err)
	if len(deals) == 0 {
		t.Skipf("GDBS data not found at %s; skipping", root)
	}
	for _, dir := range deals {
		b, err := dealfile.Load(dir)
		require.NoError(t, err, dir)
		require.NoError(t, b.Validate(), dir)
		require.NotEmpty(t, b.Claims, dir)
		// A write and reload keeps the content.
		out := t.TempDir()
		require.NoError(t, dealfile.Write(out, b))
		again, err := dealfile.Load(out)
		require.NoError(t, err)
		h1, err := b.ContentHash()
		require.NoError(t, err)
		h2, err := again.ContentHash()
		require.NoError(t, err)
		require.Equal(t, h1, h2, dir)
	}
}

func FuzzParse(f *testing.F) {
	valid := validFiles()
	names := []string{"deal.json", "claims.json", "evidence.json", "spans.json", "sanads.json", "documents.json", "calcs.json"}
	for i, name := range names {
		f.Add(uint8(i), valid[name])
	}
	f.Add(uint8(1), []byte(`{"claims":[{"value":{"time_window":7}}]}`))
	f.Add(uint8(4), []byte(`{"sanads":[{"transmission_chain":[null,{"input_refs":[null,1]}]}]}`))
	f.Add(uint8(6), []byte(`[{"inputs":{"a":1e400}}]`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		files := validFiles()
		files[names[int(which)%len(names)]] = data
		b, err := dealfile.Parse(files)
		if err != nil {
			var ve *debate.ValidationError
			if !errors.As(err, &ve) || len(ve.Violations) == 0 {
				t.Fatalf("error is not a ValidationError with violations: %v", err)
			}
			return
		}
		_ = b.Validate() // must not panic either
	})
}

func TestUnknownMembersAreWarnedWithTheirPath(t *testing.T) {
	t.Parallel()
	files := validFiles()
	files["sanads.json"] = []byte(`{"exported_at":"2026-01-01","sanads":[{"sanad_id":"sa1","claim_id":"c1","primary_evidence_id":"e1",
		"transmission_chain":[{"node_id":"n1","node_type":"SOURCE","input_refs":[],"output_ref":"e1","confidence":0.9}]}]}`)
	files["spans.json"] = []byte(`{"spans":[{"span_id":"s1","document_id":"doc1","span_type":"PAGE_TEXT",
		"locator":{"page":2,"bbox":[1,2,3,4],"rotation":90},"text_excerpt":"ARR: $1M","Span_ID":"case-insensitive match"}]}`)

	b, warnings, err := dealfile.ParseOptions(files, dealfile.Options{})
	require.NoError(t, err)
	require.NotNil(t, b)
	var got []string
	for _, w := range warnings {
		got = append(got, w.Path)
	}
	require.Equal(t, []string{
		"deal.tenant_id", "deal.unknown",
		"spans[0].locator.rotation",
		"sanads.json: exported_at",
		"sanads[0].transmission_chain[0].confidence",
	}, got)

	_, _, err = dealfile.ParseOptions(files, dealfile.Options{Strict: true})
	var verr *debate.ValidationError
	require.ErrorAs(t, err, &verr)
	fields := map[string]bool{}
	for _, v := range verr.Violations {
		fields[v.Field] = true
	}
	for _, p := range got {
		require.True(t, fields[p], "strict import names %s: %v", p, verr)
	}
}

func TestClaimTextIsRequired(t *testing.T) {
	t.Parallel()
	files := validFiles()
	files["claims.json"] = []byte(`{"claims":[{"claim_id":"c1","deal_id":"d1","claim_key":"K1","claim_class":"FINANCIAL",
		"claim_text":"  ","materiality":"HIGH"}]}`)
	b, err := dealfile.Parse(files)
	require.NoError(t, err)
	err = b.Validate()
	require.ErrorIs(t, err, debate.ErrInvalid)
	require.ErrorContains(t, err, "claims[0].claim_text")
}
