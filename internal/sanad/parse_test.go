package sanad

import (
	"math"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

func TestParseValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		num  float64
		kind ValueKind
		per  Period
	}{
		{"4500000", 4500000, KindBare, 0},
		{"4,500,000", 4500000, KindBare, 0},
		{"$4,500,000", 4500000, KindCurrency, 0},
		{"$4.5M", 4500000, KindCurrency, 0},
		{"$4.5 million", 4500000, KindCurrency, 0},
		{"4.5 million", 4500000, KindBare, 0},
		{"USD 4.5M", 4500000, KindCurrency, 0},
		{"US$4.5mm", 4500000, KindCurrency, 0},
		{"4,500,000 USD", 4500000, KindCurrency, 0},
		{"$4,500K", 4500000, KindCurrency, 0},
		{"4.500.000", 4500000, KindBare, 0},
		{"4\u00a0500\u00a0000", 4500000, KindBare, 0},
		{"$25B", 25e9, KindCurrency, 0},
		{"$25 billion", 25e9, KindCurrency, 0},
		{"$9.5bn", 9.5e9, KindCurrency, 0},
		{"$2.1K", 2100, KindCurrency, 0},
		{"72.5%", 72.5, KindPercent, 0},
		{"72.50 %", 72.5, KindPercent, 0},
		{"72.5 percent", 72.5, KindPercent, 0},
		{"0.725", 0.725, KindBare, 0},
		{".725", 0.725, KindBare, 0},
		{"22.5 months", 22.5, KindMonths, 0},
		{"22.5 mo", 22.5, KindMonths, 0},
		{"1.15x", 1.15, KindMultiple, 0},
		{"$350K/mo", 350000, KindCurrency, PeriodMonth},
		{"$350,000 per month", 350000, KindCurrency, PeriodMonth},
		{"$4.2M per year", 4.2e6, KindCurrency, PeriodYear},
		{"(1,200)", -1200, KindBare, 0},
		{"-$350,000", -350000, KindCurrency, 0},
		{"€3.1M", 3.1e6, KindCurrency, 0},
		{"3.1 million dollars", 3.1e6, KindCurrency, 0},
	}
	for _, tt := range tests {
		v, ok := ParseValue(tt.in)
		require.True(t, ok, tt.in)
		require.InDelta(t, tt.num, v.Num, math.Abs(tt.num)*1e-12, tt.in)
		require.Equal(t, tt.kind, v.Kind, tt.in)
		require.Equal(t, tt.per, v.Per, tt.in)
	}
}

func TestParseValueRejectsNonNumbers(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "ARR", "N/A", "n/a", "—", "-", "$", "%", "Q4", "FY25", "FY2025", "v2", "4Q25",
		"2025-12-31", "12/2025", "10-20", "3:30", "x4", "M", "$M", "1.2.3", "4,50", "ARR: $4.5M", "TBD", "∞", "NaN", "Inf", "1e400"} {
		_, ok := ParseValue(s)
		require.False(t, ok, "%q read as a value", s)
	}
}

func TestFindValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []float64
	}{
		{"ARR: $4,500,000 (as of Dec 2025)", []float64{4500000}},
		{"LTM Revenue (Dec 2024 - Nov 2025)", nil},
		{"FY2025 ARR: $6,800,000", []float64{6800000}},
		{"Revenue 2025", nil},
		{"2025", []float64{2025}},
		{"$2,025", []float64{2025}},
		{"Q4 2025 CAC: $1.1K", []float64{1100}},
		{"ARR ($000): 4,500", []float64{4500000}},
		{"Revenue (in millions): 12.5", []float64{12.5e6}},
		{"$4.5M ARR and $375K MRR", []float64{4.5e6, 375000}},
		{"Runway of 22.5 months at Dec 2025", []float64{22.5}},
		{"Web3 Labs ARR: $1M", []float64{1e6}},
	}
	for _, tt := range tests {
		var got []float64
		for _, tok := range FindValues(tt.in) {
			got = append(got, tok.Value.Num)
		}
		require.Equal(t, tt.want, got, tt.in)
	}
}

func TestParseWindow(t *testing.T) {
	t.Parallel()
	m := MonthOf
	tests := []struct {
		in    string
		start Month
		end   Month
		point bool
		trail bool
	}{
		{"FY2025", m(2025, 1), m(2025, 12), false, false},
		{"FY 25", m(2025, 1), m(2025, 12), false, false},
		{"fiscal year 2024", m(2024, 1), m(2024, 12), false, false},
		{"Q4 2025", m(2025, 10), m(2025, 12), false, false},
		{"Q3'25", m(2025, 7), m(2025, 9), false, false},
		{"4Q25", m(2025, 10), m(2025, 12), false, false},
		{"2025 Q1", m(2025, 1), m(2025, 3), false, false},
		{"H2 2025", m(2025, 7), m(2025, 12), false, false},
		{"Dec 2025", m(2025, 12), m(2025, 12), false, false},
		{"December 2025", m(2025, 12), m(2025, 12), false, false},
		{"Dec '25", m(2025, 12), m(2025, 12), false, false},
		{"Monthly burn (Dec-2025)", m(2025, 12), m(2025, 12), false, false},
		{"Q4-25", m(2025, 10), m(2025, 12), false, false},
		{"as of 12/31/2025", m(2025, 12), m(2025, 12), true, false},
		{"as of Q4 2025", m(2025, 12), m(2025, 12), true, false},
		{"2025-12", m(2025, 12), m(2025, 12), false, false},
		{"as of Dec 2025", m(2025, 12), m(2025, 12), true, false},
		{"at December 31, 2025", m(2025, 12), m(2025, 12), true, false},
		{"2025-12-31", m(2025, 12), m(2025, 12), true, false},
		{"31 Dec 2025", m(2025, 12), m(2025, 12), true, false},
		{"LTM Revenue (Dec 2024 - Nov 2025)", m(2024, 12), m(2025, 11), false, true},
		{"TTM ending Nov 2025", m(2024, 12), m(2025, 11), false, true},
		{"trailing twelve months", 0, 0, false, true},
		{"Jan–Dec 2025", m(2025, 1), m(2025, 12), false, false},
		{"Nov-Feb 2026", m(2025, 11), m(2026, 2), false, false},
		{"2024-12 to 2025-11", m(2024, 12), m(2025, 11), false, false},
		{"TAM 2030", m(2030, 1), m(2030, 12), false, false},
		// Digits of a number are never a year; the period beside it is read.
		{"NRR: 1.2092 (FY2025)", m(2025, 1), m(2025, 12), false, false},
		{"Gross margin: 0.2019 for Q4 2025", m(2025, 10), m(2025, 12), false, false},
		{"Cash as of 31.12.2025: EUR 4.2M", m(2025, 12), m(2025, 12), true, false},
	}
	for _, tt := range tests {
		w, ok := ParseWindow(tt.in)
		require.True(t, ok, tt.in)
		require.Equal(t, tt.start, w.Start, "%s: %s", tt.in, w)
		require.Equal(t, tt.end, w.End, "%s: %s", tt.in, w)
		require.Equal(t, tt.point, w.Point, tt.in)
		require.Equal(t, tt.trail, w.Trailing, tt.in)
	}
	for _, s := range []string{"", "ARR", "Q4", "2025", "4500000", "Gross margin: 72.5%", "Q13", "FY", "13/2025",
		// Decimals, digit groups, longer runs and amounts hold no year.
		"NRR: 1.2092", "Gross margin: 0.2019", "Margin 0,2019", "Runway 2019.5 weeks", "Revenue 1,2025 units",
		"Churn 12025 accounts", "Rate 1.2025-12", "CAC: $2019", "CAC: €2025 blended", "Burn 2019,500 per month"} {
		_, ok := ParseWindow(s)
		require.False(t, ok, "%q read as a period", s)
	}
}

func TestWindowsAgree(t *testing.T) {
	t.Parallel()
	fy := Window{Start: MonthOf(2025, 1), End: MonthOf(2025, 12)}
	q4 := Window{Start: MonthOf(2025, 10), End: MonthOf(2025, 12)}
	q3 := Window{Start: MonthOf(2025, 7), End: MonthOf(2025, 9)}
	dec := Window{Start: MonthOf(2025, 12), End: MonthOf(2025, 12), Point: true}
	nov := Window{Start: MonthOf(2025, 11), End: MonthOf(2025, 11), Point: true}
	ltm := Window{Start: MonthOf(2024, 12), End: MonthOf(2025, 11), Trailing: true}
	ltmFY := Window{Start: MonthOf(2025, 1), End: MonthOf(2025, 12), Trailing: true}
	ltmUndated := Window{Trailing: true}
	tests := []struct {
		name   string
		cl, ev Window
		stock  bool
		agree  bool
	}{
		{"unknown evidence period", fy, Window{}, false, true},
		{"unknown claim period", Window{}, q3, false, true},
		{"same FY", fy, fy, false, true},
		{"as of the FY's last month", fy, dec, false, true},
		{"as of another month", fy, nov, true, false},
		{"LTM to Nov vs FY", fy, ltm, false, false},
		{"LTM to Nov vs FY, stock", fy, ltm, true, false},
		{"LTM covering the FY's months", fy, ltmFY, false, true},
		{"undated LTM vs FY", fy, ltmUndated, false, false},
		{"undated LTM vs LTM", ltm, ltmUndated, false, true},
		{"other quarter", q4, q3, false, false},
		{"flow: Q4 vs FY", fy, q4, false, false},
		{"stock: Q4 end vs FY end", fy, q4, true, true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.agree, windowsAgree(tt.cl, tt.ev, tt.stock), tt.name)
	}
}

func TestFindMetrics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []Family
	}{
		{"ARR: $4.5M", []Family{FamilyARR}},
		{"Annual Recurring Revenue", []Family{FamilyARR}},
		{"LTM Revenue (Dec 2024 - Nov 2025)", []Family{FamilyARR}},
		{"MRR: $150,000", []Family{FamilyARR}},
		{"Net Revenue Retention: 115%", []Family{FamilyNRR}},
		{"Cost of revenue: $1.2M", []Family{FamilyCOGS}},
		{"Revenue growth: 120%", []Family{"GROWTH"}},
		{"LTV/CAC: 3.5x", []Family{"LTV_CAC"}},
		{"Gross Margin: 72.50%", []Family{FamilyGrossMargin}},
		{"Monthly-burn: $350K", []Family{FamilyBurn}},
		{"Cash runway of 20 months", []Family{FamilyRunway}},
		{"Cash: $9M", []Family{FamilyCash}},
		{"Total addressable market", []Family{FamilyTAM}},
		{"Blended CAC $2.1K", []Family{FamilyCAC}},
		{"Narrative about arrows and revenues", []Family{FamilyARR}},
		{"Cloud Observability", nil},
	}
	for _, tt := range tests {
		var got []Family
		for _, m := range FindMetrics(tt.in) {
			got = append(got, m.Family)
		}
		require.Equal(t, tt.want, got, tt.in)
	}
	mrr := FindMetrics("MRR")[0]
	require.Equal(t, FormMonthly, mrr.Form)
	require.Equal(t, FormAnnual, FindMetrics("ARR")[0].Form)
}

func TestClaimMetric(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pred, text, key string
		want            Family
	}{
		{"ARR(Acme, 2025-12) = 4500000 USD", "", "", FamilyARR},
		{"GrossMargin(Acme, 2025-12) = 72.50%", "", "", FamilyGrossMargin},
		{"MonthlyBurn(Acme, 2025-12) = 350000 USD", "", "", FamilyBurn},
		{"NetRevenueRetention(Acme, 2025) = 115%", "", "", FamilyNRR},
		{"", "Runway is 22.5 months", "", FamilyRunway},
		{"Metric(Acme) = 5", "Customer acquisition cost is $2,500", "K9", FamilyCAC},
		{"", "", "C7", FamilyTAM},
	}
	for _, tt := range tests {
		m, _, ok := claimMetric(tt.pred, tt.text, tt.key)
		require.True(t, ok, tt.pred+tt.text)
		require.Equal(t, tt.want, m.Family, tt.pred+tt.text)
	}
	_, _, ok := claimMetric("Founded(Acme) = 2019", "Founded in 2019", "Z1")
	require.False(t, ok)
}

func TestReadText(t *testing.T) {
	t.Parallel()
	rs := ReadText("$4.5M ARR and $375K MRR")
	require.Len(t, rs, 2)
	require.Equal(t, 4.5e6, rs[0].Value.Num)
	require.Equal(t, FormAnnual, rs[0].Form())
	require.Equal(t, 375000.0, rs[1].Value.Num)
	require.Equal(t, FormMonthly, rs[1].Form())

	rs = ReadText("FY2025 — ARR: $4.5M, NRR: 115%")
	require.Len(t, rs, 2)
	require.Equal(t, MonthOf(2025, 12), rs[1].Window.End, "a period before the first metric applies to all")
	require.Equal(t, 115.0, rs[1].Value.Num)

	rs = ReadText("LTM Revenue (Dec 2024 - Nov 2025)")
	require.Len(t, rs, 1)
	require.Nil(t, rs[0].Value, "a header has no value")
	require.True(t, rs[0].Window.Trailing)

	rs = ReadText("0.725")
	require.Len(t, rs, 1)
	require.Nil(t, rs[0].Metric)
	require.Equal(t, 0.725, rs[0].Value.Num)
}

func TestRoundHalfUp(t *testing.T) {
	t.Parallel()
	require.Equal(t, 68.51, roundHalfUp(68.505, 0.01))
	require.Equal(t, 24.7, roundHalfUp(24.65, 0.1))
	require.Equal(t, 24.8, roundHalfUp(24.75, 0.1))
	require.Equal(t, 67.32, roundHalfUp(13013630.0/19331000*100, 0.01))
	require.Equal(t, 0.857, roundHalfUp(6.0/7, 0.001))
	require.Equal(t, 4501000.0, roundHalfUp(4500500, 1000))
	require.Equal(t, -4501000.0, roundHalfUp(-4500500, 1000))
	require.True(t, sameAt(4500400, 4500000, 1000))
	require.False(t, sameAt(4500500, 4500000, 1000))
}

// FuzzParseValue: no panic; a value is read only from text with a digit,
// it is finite, and text without digits never gives one.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"$4.5M", "4,500,000", "4.5 million", "0.725", "72.50%", "ARR", "N/A", "—", "Q4",
		"(1,200)", "22.5 months", "$350K/mo", "US$ 3", "4.500.000", "1'000", "ARR ($000): 4,500", "\xff\xfe9", "9" + strings.Repeat("0", 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseValue(s)
		hasDigit := strings.IndexFunc(s, unicode.IsDigit) >= 0
		if ok {
			if !hasDigit {
				t.Fatalf("%q has no digit but gave %v", s, v)
			}
			if math.IsNaN(v.Num) || math.IsInf(v.Num, 0) {
				t.Fatalf("%q gave a non-finite value", s)
			}
		}
		for _, tok := range FindValues(s) {
			if tok.Start < 0 || tok.End > len(s) || tok.Start >= tok.End {
				t.Fatalf("%q: token out of bounds %d..%d", s, tok.Start, tok.End)
			}
			if strings.IndexFunc(s[tok.Start:tok.End], unicode.IsDigit) < 0 {
				t.Fatalf("%q: token %q has no digit", s, s[tok.Start:tok.End])
			}
			if math.IsNaN(tok.Value.Num) || math.IsInf(tok.Value.Num, 0) {
				t.Fatalf("%q gave a non-finite value", s)
			}
		}
		_ = ReadText(s)
	})
}

// FuzzParseWindow: no panic; a window read is well formed.
func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"FY2025", "Q4 2025", "LTM Revenue (Dec 2024 - Nov 2025)", "as of Dec 2025", "2025-12-31",
		"Dec '25", "H1 2025", "Nov-Feb 2026", "TTM ending Nov 2025", "Q4", "13/2025", "2025-13", "Feb 30, 2025"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, ok := ParseWindow(s)
		if !ok {
			return
		}
		if !w.Trailing && (w.Start == 0 || w.End == 0) {
			t.Fatalf("%q: dated window without months: %+v", s, w)
		}
		if w.Start > w.End {
			t.Fatalf("%q: window ends before it starts: %+v", s, w)
		}
		if w.Point && w.Start != w.End {
			t.Fatalf("%q: point with a range: %+v", s, w)
		}
		_ = maskWindows(s)
	})
}
