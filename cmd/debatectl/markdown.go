package main

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// renderMarkdown renders the Markdown of a brief for a terminal: headings
// underlined, **bold** and `code` shown (in bold with ANSI on a terminal,
// plainly otherwise), tables with aligned columns, lists with bullets. It
// knows the Markdown the protocols write, not all of CommonMark.
func renderMarkdown(md string, ansi bool) string {
	var out []string
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if isTableRow(line) {
			var rows [][]string
			for ; i < len(lines) && isTableRow(lines[i]); i++ {
				if !isTableRule(lines[i]) {
					rows = append(rows, tableCells(lines[i], ansi))
				}
			}
			i--
			out = append(out, renderTable(rows)...)
			continue
		}
		switch {
		case strings.HasPrefix(line, "# "):
			t := inline(line[2:], ansi)
			out = append(out, bold(t, ansi), strings.Repeat("═", visibleWidth(t)))
		case strings.HasPrefix(line, "## "):
			t := inline(line[3:], ansi)
			out = append(out, bold(t, ansi), strings.Repeat("─", visibleWidth(t)))
		case strings.HasPrefix(line, "### "):
			out = append(out, bold(inline(line[4:], ansi), ansi))
		default:
			indent := len(line) - len(strings.TrimLeft(line, " "))
			rest := line[indent:]
			if strings.HasPrefix(rest, "- ") || strings.HasPrefix(rest, "* ") {
				out = append(out, strings.Repeat(" ", indent)+"• "+inline(rest[2:], ansi))
			} else {
				out = append(out, inline(line, ansi))
			}
		}
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}

var (
	boldRE = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	codeRE = regexp.MustCompile("`([^`]+)`")
	ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")
)

// inline renders **bold** and `code`.
func inline(s string, ansi bool) string {
	s = boldRE.ReplaceAllStringFunc(s, func(m string) string { return bold(m[2:len(m)-2], ansi) })
	return codeRE.ReplaceAllString(s, "$1")
}

func bold(s string, ansi bool) string {
	if !ansi {
		return s
	}
	return "\x1b[1m" + s + "\x1b[0m"
}

// visibleWidth is how many columns s takes: runes, without ANSI codes.
func visibleWidth(s string) int {
	return utf8.RuneCountInString(ansiRE.ReplaceAllString(s, ""))
}

func isTableRow(line string) bool {
	t := strings.TrimSpace(line)
	return len(t) > 1 && strings.HasPrefix(t, "|") && strings.HasSuffix(t, "|")
}

// isTableRule is the |---|:--:| line under a table's header.
func isTableRule(line string) bool {
	return strings.Trim(strings.TrimSpace(line), "|-: ") == ""
}

func tableCells(line string, ansi bool) []string {
	t := strings.TrimSpace(line)
	cells := strings.Split(t[1:len(t)-1], "|")
	for i, c := range cells {
		cells[i] = inline(strings.TrimSpace(c), ansi)
	}
	return cells
}

// renderTable aligns the columns; the first row is the header, underlined.
func renderTable(rows [][]string) []string {
	if len(rows) == 0 {
		return nil
	}
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], visibleWidth(c))
		}
	}
	format := func(r []string) string {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-visibleWidth(c)+2))
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	out := []string{format(rows[0])}
	rules := make([]string, len(widths))
	for i, w := range widths {
		rules[i] = strings.Repeat("─", w)
	}
	out = append(out, strings.Join(rules, "  "))
	for _, r := range rows[1:] {
		out = append(out, format(r))
	}
	return out
}
