package apiconv_test

import (
	"errors"
	"testing"

	"buf.build/go/protovalidate"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

func enrichedBundle() *debate.DealBundle {
	b := storetest.SampleBundle("deal-1")
	b.Enrichment = []debate.EnrichmentRecord{
		{ID: "r1", EntityType: "COMPANY", EntityName: "AutoScale Commerce", DataPoint: "ARR", Value: "4.5M", Unit: "USD", Source: "Crunchbase", AsOf: "2025-12-31", SourceGrade: debate.GradeC},
		{ID: "r2", EntityType: "PERSON", EntityName: "Jane Doe", DataPoint: "prior exits", Value: "2", Source: "LinkedIn", SourceGrade: debate.GradeD},
		{ID: "r3", EntityType: "MARKET", EntityName: "EU marketplaces", DataPoint: "TAM", Value: "40B"},
	}
	return b
}

func TestBundleRoundTripEnrichment(t *testing.T) {
	t.Parallel()
	b := enrichedBundle()
	req, err := apiconv.BundleToProto(b)
	require.NoError(t, err)
	require.Len(t, req.GetEnrichmentRecords(), 3)
	pv, err := protovalidate.New()
	require.NoError(t, err)
	require.NoError(t, pv.Validate(req))
	back, err := apiconv.BundleFromProto(req)
	require.NoError(t, err)
	require.NoError(t, back.Validate())
	require.Equal(t, b.Enrichment, back.Enrichment)
	h1, err := b.ContentHash()
	require.NoError(t, err)
	h2, err := back.ContentHash()
	require.NoError(t, err)
	require.Equal(t, h1, h2)

	// No records stay no records.
	req, err = apiconv.BundleToProto(storetest.SampleBundle("deal-1"))
	require.NoError(t, err)
	require.Empty(t, req.GetEnrichmentRecords())
	back, err = apiconv.BundleFromProto(req)
	require.NoError(t, err)
	require.Nil(t, back.Enrichment)
}

func TestBundleToProtoNamesUnknownEnrichmentGrade(t *testing.T) {
	t.Parallel()
	b := enrichedBundle()
	b.Enrichment[1].SourceGrade = "E"
	_, err := apiconv.BundleToProto(b)
	var ve *debate.ValidationError
	require.True(t, errors.As(err, &ve))
	require.Len(t, ve.Violations, 1)
	require.Equal(t, "enrichment_records[1].source_grade", ve.Violations[0].Field)
}

func TestEnrichmentProtoRules(t *testing.T) {
	t.Parallel()
	pv, err := protovalidate.New()
	require.NoError(t, err)
	for name, edit := range map[string]func(r *debate.EnrichmentRecord){
		"no id":        func(r *debate.EnrichmentRecord) { r.ID = "" },
		"bad type":     func(r *debate.EnrichmentRecord) { r.EntityType = "ROBOT" },
		"no name":      func(r *debate.EnrichmentRecord) { r.EntityName = "" },
		"no datapoint": func(r *debate.EnrichmentRecord) { r.DataPoint = "" },
	} {
		b := enrichedBundle()
		edit(&b.Enrichment[0])
		req, err := apiconv.BundleToProto(b)
		require.NoError(t, err)
		require.Error(t, pv.Validate(req), name)
		b, err = apiconv.BundleFromProto(req)
		require.NoError(t, err)
		require.Error(t, b.Validate(), name)
	}
}
