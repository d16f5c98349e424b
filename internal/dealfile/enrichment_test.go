package dealfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
)

const enrichmentJSON = `{"enrichment_records":[
	{"record_id":"r1","entity_type":"COMPANY","entity_name":"Acme","data_point":"ARR","value":"1.2M",
	 "unit":"USD","source":"Crunchbase","as_of":"2025-12-31","source_grade":"C","tenant_id":"other"},
	{"record_id":"r2","entity_type":"MARKET","entity_name":"EU SaaS","data_point":"TAM","value":"40B","source_grade":null}]}`

func TestParseEnrichment(t *testing.T) {
	t.Parallel()
	files := validFiles()
	files[dealfile.EnrichmentFile] = []byte(enrichmentJSON)
	b, err := dealfile.Parse(files)
	require.NoError(t, err)
	require.NoError(t, b.Validate())
	require.Equal(t, []debate.EnrichmentRecord{
		{ID: "r1", EntityType: "COMPANY", EntityName: "Acme", DataPoint: "ARR", Value: "1.2M", Unit: "USD", Source: "Crunchbase", AsOf: "2025-12-31", SourceGrade: debate.GradeC},
		{ID: "r2", EntityType: "MARKET", EntityName: "EU SaaS", DataPoint: "TAM", Value: "40B"},
	}, b.Enrichment)

	// Absent file: no records.
	b, err = dealfile.Parse(validFiles())
	require.NoError(t, err)
	require.Nil(t, b.Enrichment)
}

func TestParseEnrichmentErrors(t *testing.T) {
	t.Parallel()
	files := validFiles()
	files[dealfile.EnrichmentFile] = []byte(`{"enrichment_records":[{"record_id":"r1"},{"record_id":7}]}`)
	_, err := dealfile.Parse(files)
	require.ErrorIs(t, err, debate.ErrInvalid)
	require.ErrorContains(t, err, "enrichment_records[1].record_id")

	files[dealfile.EnrichmentFile] = []byte(`{"enrichment_records":[`)
	_, err = dealfile.Parse(files)
	require.ErrorIs(t, err, debate.ErrInvalid)
	require.ErrorContains(t, err, "enrichment.json")
}

func TestWriteLoadEnrichment(t *testing.T) {
	t.Parallel()
	files := validFiles()
	files[dealfile.EnrichmentFile] = []byte(enrichmentJSON)
	b, err := dealfile.Parse(files)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, b))
	got, err := dealfile.Load(dir)
	require.NoError(t, err)
	require.Equal(t, b.Enrichment, got.Enrichment)

	// Without records, no file is written.
	b.Enrichment = nil
	dir = t.TempDir()
	require.NoError(t, dealfile.Write(dir, b))
	_, err = os.Stat(filepath.Join(dir, dealfile.EnrichmentFile))
	require.True(t, errors.Is(err, os.ErrNotExist))
	got, err = dealfile.Load(dir)
	require.NoError(t, err)
	require.Nil(t, got.Enrichment)
}
