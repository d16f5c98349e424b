package sanad

import (
	"cmp"
	"slices"
)

// Reading is what a span's text says about one metric: the metric (absent
// for an unlabelled cell such as "0.725"), the value stated for it (absent
// for a header such as "LTM Revenue (Dec 2024 - Nov 2025)") and the period.
type Reading struct {
	Metric    *Mention
	Value     *Value
	ValueText string
	Window    Window
}

// Form is the time basis of the reading: the metric's, unless the value is
// a rate ("$375K/mo").
func (r Reading) Form() Form {
	if r.Value != nil {
		switch r.Value.Per {
		case PeriodMonth:
			return FormMonthly
		case PeriodYear:
			return FormAnnual
		}
	}
	if r.Metric != nil {
		return r.Metric.Form
	}
	return FormNone
}

// ReadText splits text into one reading per metric it names. A value is
// paired with the metric before it ("ARR: $4.5M, MRR: $375K"), or with the
// metric after it when the text puts values first ("$4.5M ARR"). A period
// is taken from the metric's own part of the text, else from the part
// before the first metric ("FY2025 — ARR: $4.5M"). Text that names no
// metric gives one reading without a metric.
func ReadText(text string) []Reading {
	mentions := FindMetrics(text)
	windows := findWindows(text, true)
	values := findValues(text, windows)

	// Both lists are in text order: find the ones inside [a, b) by binary
	// search, so that a long text with many metrics reads in n log n.
	windowIn := func(a, b int) Window {
		i, _ := slices.BinarySearchFunc(windows, a, func(w wtok, a int) int { return cmp.Compare(w.start, a) })
		var in []wtok
		for ; i < len(windows) && windows[i].start < b; i++ {
			if windows[i].end <= b {
				in = append(in, windows[i])
			}
			if len(in) > 0 && !in[0].w.Trailing {
				break // windowOf needs the first dated window and any LTM marker before it
			}
		}
		return windowOf(in)
	}
	valueIn := func(a, b int, last bool) (*Value, string) {
		i, _ := slices.BinarySearchFunc(values, a, func(v Token, a int) int { return cmp.Compare(v.Start, a) })
		var found *Token
		for ; i < len(values) && values[i].Start < b; i++ {
			if values[i].End <= b {
				found = &values[i]
				if !last {
					break
				}
			}
		}
		if found == nil {
			return nil, ""
		}
		val := found.Value
		return &val, text[found.Start:found.End]
	}

	if len(mentions) == 0 {
		v, vt := valueIn(0, len(text), false)
		return []Reading{{Value: v, ValueText: vt, Window: windowIn(0, len(text))}}
	}
	// Values first ("$4.5M ARR") when a value precedes the first metric.
	valuesFirst := false
	for _, v := range values {
		if v.End <= mentions[0].Start {
			valuesFirst = true
			break
		}
	}
	prefix := windowIn(0, mentions[0].Start)
	out := make([]Reading, 0, len(mentions))
	for k := range mentions {
		m := mentions[k]
		var a, b int
		if valuesFirst {
			if k > 0 {
				a = mentions[k-1].End
			}
			b = m.End
		} else {
			a, b = m.Start, len(text)
			if k == 0 {
				a = 0
			}
			if k+1 < len(mentions) {
				b = mentions[k+1].Start
			}
		}
		r := Reading{Metric: &m}
		if valuesFirst {
			r.Value, r.ValueText = valueIn(a, b, true)
		} else {
			r.Value, r.ValueText = valueIn(m.End, b, false)
		}
		r.Window = windowIn(a, b)
		if !r.Window.Known() {
			r.Window = prefix
		}
		out = append(out, r)
	}
	return out
}
