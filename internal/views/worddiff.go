package views

import "strings"

// wordOp is one piece of a word diff.
type wordOp struct {
	kind byte // '=' same, '-' removed, '+' added
	text string
}

// wordDiff compares two texts word by word (longest common subsequence over
// whitespace-separated words), which is how a reviewer reads a prompt change.
func wordDiff(a, b string) []wordOp {
	wa, wb := strings.Fields(a), strings.Fields(b)
	n, m := len(wa), len(wb)
	// Prompts are short; the quadratic table is fine, but cap it so a
	// pathological input cannot blow up memory.
	if n*m > 4_000_000 {
		return []wordOp{{'-', a}, {'+', b}}
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
	var ops []wordOp
	push := func(kind byte, w string) {
		if len(ops) > 0 && ops[len(ops)-1].kind == kind {
			ops[len(ops)-1].text += " " + w
			return
		}
		ops = append(ops, wordOp{kind, w})
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

// renderWordDiff renders ops with markers: [-removed-] {+added+}, the
// format of git's --word-diff=plain, readable without colour.
func renderWordDiff(ops []wordOp, del, add func(string) string) string {
	parts := make([]string, 0, len(ops))
	for _, op := range ops {
		switch op.kind {
		case '-':
			parts = append(parts, del("[-"+op.text+"-]"))
		case '+':
			parts = append(parts, add("{+"+op.text+"+}"))
		default:
			parts = append(parts, op.text)
		}
	}
	return strings.Join(parts, " ")
}
