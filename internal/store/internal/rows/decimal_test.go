package rows

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// Records as the stores wrote them when figures were float64 (commit
// 0d4e30f), for a deal whose content hash was then legacyHash.
const (
	legacyHash       = "badc8d9e3404479da64eefcbf7788d5c6fcc2850028ae90b568e9cb3c3dd8a8f"
	legacyDealRecord = `{"deal_id":"deal-legacy","external_ref":"","company_name":"Acme","stage":"SEED","sector":"","status":"","materiality_threshold":0.1,"created_at":"2026-01-05T09:00:00Z","updated_at":"2026-01-05T09:00:00Z"}`
	legacyCalcRecord = `{"calc_id":"k1","calc_sanad_id":"","calc_type":"GROSS_MARGIN","input_claim_ids":null,"inputs":{"cogs":0.1,"revenue":3150000},"input_span_ids":null,"formula_hash":"","code_version":"","created_at":"2026-01-05T09:00:00Z"}`
)

var legacyClaimRecords = []string{
	`{"claim_id":"c1","claim_key":"C1","claim_class":"FINANCIAL","claim_text":"ARR","predicate":"","value":{"value":3150000,"unit":"USD","currency":"USD","as_of":"2025-12-31","time_window":null},"materiality":"HIGH","ic_bound":false,"primary_span_id":"","created_by":"","created_at":"2026-01-05T09:00:00Z","updated_at":"2026-01-05T09:00:00Z"}`,
	`{"claim_id":"c2","claim_key":"C2","claim_class":"FINANCIAL","claim_text":"GM","predicate":"","value":{"value":0.1,"unit":"percent","currency":"","as_of":"","time_window":null},"materiality":"HIGH","ic_bound":false,"primary_span_id":"","created_by":"","created_at":"2026-01-05T09:00:00Z","updated_at":"2026-01-05T09:00:00Z"}`,
	`{"claim_id":"c3","claim_key":"C3","claim_class":"MARKET_SIZE","claim_text":"TAM","predicate":"","value":{"value":1e+21,"unit":"USD","currency":"USD","as_of":"","time_window":null},"materiality":"LOW","ic_bound":false,"primary_span_id":"","created_by":"","created_at":"2026-01-05T09:00:00Z","updated_at":"2026-01-05T09:00:00Z"}`,
	`{"claim_id":"c4","claim_key":"C4","claim_class":"OTHER","claim_text":"tiny","predicate":"","value":{"value":-1.5e-7,"unit":"x","currency":"","as_of":"","time_window":null},"materiality":"LOW","ic_bound":false,"primary_span_id":"","created_by":"","created_at":"2026-01-05T09:00:00Z","updated_at":"2026-01-05T09:00:00Z"}`,
}

// TestLegacyRecordsReadExactly reads records written before debate.Decimal:
// every figure comes back as the decimal the float meant, and the deal
// rebuilt from them hashes as it did when it was imported, so re-importing
// it is still a no-op.
func TestLegacyRecordsReadExactly(t *testing.T) {
	t.Parallel()
	d, err := DecodeDeal([]byte(legacyDealRecord))
	require.NoError(t, err)
	require.Equal(t, "0.1", d.MaterialityThreshold.String())
	b := &debate.DealBundle{Deal: d}
	for _, rec := range legacyClaimRecords {
		c, err := DecodeClaim("deal-legacy", []byte(rec))
		require.NoError(t, err)
		c.DealID = "" // imported without one
		b.Claims = append(b.Claims, c)
	}
	var values []string
	for _, c := range b.Claims {
		values = append(values, c.Value.Value.String())
	}
	require.Equal(t, []string{"3150000", "0.1", "1000000000000000000000", "-0.00000015"}, values)
	k, err := DecodeCalc([]byte(legacyCalcRecord))
	require.NoError(t, err)
	require.Equal(t, map[string]debate.Decimal{"cogs": debate.MustDecimal("0.1"), "revenue": debate.MustDecimal("3150000")}, k.Inputs)
	b.Calcs = []debate.Calc{k}
	h, err := b.ContentHash()
	require.NoError(t, err)
	require.Equal(t, legacyHash, h)

	// Written again, the records are byte for byte what they were.
	w, err := EncodeBundle(b, h, time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, legacyDealRecord, w.Deal.Record)
	require.Equal(t, legacyClaimRecords, w.Claims.Records)
	require.Equal(t, legacyCalcRecord, w.Calcs.Records[0])
}

// TestRecordsKeepEveryDigit stores figures no float holds and reads them
// back unchanged.
func TestRecordsKeepEveryDigit(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	awkward := []string{"0.1", "1000000000000000000000", "12345678901234567.89", "-0.5", "9007199254740993", "0.10000000000000000001"}
	b := &debate.DealBundle{Deal: debate.Deal{ID: "deal-x", MaterialityThreshold: debate.MustDecimal("12345678901234567.89"), CreatedAt: at, UpdatedAt: at}}
	for i, s := range awkward {
		id := "c" + strings.Repeat("x", i+1)
		b.Claims = append(b.Claims, debate.Claim{ID: id, Key: id, Class: debate.ClaimClassFinancial, Text: "t", Materiality: debate.MaterialityLow,
			Value: &debate.ClaimValue{Value: debate.MustDecimal(s), Unit: "USD", Currency: "USD"}})
	}
	b.Calcs = []debate.Calc{{ID: "k", Type: debate.CalcRunway, Inputs: map[string]debate.Decimal{"cash": debate.MustDecimal("12345678901234567.89")}}}
	w, err := EncodeBundle(b, "h", at)
	require.NoError(t, err)
	d, err := DecodeDeal([]byte(w.Deal.Record))
	require.NoError(t, err)
	require.Equal(t, "12345678901234567.89", d.MaterialityThreshold.String())
	got := map[string]string{}
	for i, id := range w.Claims.IDs {
		c, err := DecodeClaim("deal-x", []byte(w.Claims.Records[i]))
		require.NoError(t, err)
		got[id] = c.Value.Value.String()
		require.True(t, json.Valid([]byte(w.Claims.Records[i])))
	}
	for i, s := range awkward {
		require.Equal(t, s, got["c"+strings.Repeat("x", i+1)])
	}
	k, err := DecodeCalc([]byte(w.Calcs.Records[0]))
	require.NoError(t, err)
	require.Equal(t, "12345678901234567.89", k.Inputs["cash"].String())
}
