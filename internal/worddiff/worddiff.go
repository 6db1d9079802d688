package worddiff

import "strings"

// Op is one piece of a word diff: Kind is '=' for words both texts
// have, '-' for words only the first has, '+' for words only the second
// has; Text is the words, joined by single spaces.
type Op struct {
	Kind byte
	Text string
}

// maxCells bounds the comparison's table: past it the texts are shown as
// one removal and one addition, so a pathological input cannot take the
// memory of a quadratic table.
const maxCells = 4_000_000

// Diff compares a and b word by word (the longest common subsequence
// over whitespace-separated words).
func Diff(a, b string) []Op {
	wa, wb := strings.Fields(a), strings.Fields(b)
	n, m := len(wa), len(wb)
	if n*m > maxCells {
		return []Op{{'-', a}, {'+', b}}
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if wa[i] == wb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []Op
	push := func(kind byte, w string) {
		if len(ops) > 0 && ops[len(ops)-1].Kind == kind {
			ops[len(ops)-1].Text += " " + w
			return
		}
		ops = append(ops, Op{kind, w})
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case wa[i] == wb[j]:
			push('=', wa[i])
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			push('-', wa[i])
			i++
		default:
			push('+', wb[j])
			j++
		}
	}
	for ; i < n; i++ {
		push('-', wa[i])
	}
	for ; j < m; j++ {
		push('+', wb[j])
	}
	return ops
}

// Render writes ops with markers, [-removed-] {+added+}, the format of
// git's --word-diff=plain, readable without colour; del and add wrap
// each marked piece (in colour, say).
func Render(ops []Op, del, add func(string) string) string {
	parts := make([]string, 0, len(ops))
	for _, op := range ops {
		switch op.Kind {
		case '-':
			parts = append(parts, del("[-"+op.Text+"-]"))
		case '+':
			parts = append(parts, add("{+"+op.Text+"+}"))
		default:
			parts = append(parts, op.Text)
		}
	}
	return strings.Join(parts, " ")
}
