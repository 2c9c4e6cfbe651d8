package dag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a definition.
type Problem struct {
	Path    string `json:"path"`    // JSON path of the offending value, e.g. "$.nodes[3].depends_on[0]"
	Message string `json:"message"` // what is wrong, e.g. `unknown node "x"`
}

// ValidationError lists every problem found in a definition. Parse, Validate and Compile return
// it as *ValidationError; recover it with errors.As.
type ValidationError struct {
	Problems []Problem
}

// maxSummarised is how many problems Error spells out.
const maxSummarised = 5

// Error summarises the first few problems.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("invalid workflow definition: ")
	if len(e.Problems) > 1 {
		fmt.Fprintf(&b, "%d problems: ", len(e.Problems))
	}
	for i, p := range e.Problems {
		if i == maxSummarised {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Path + ": " + p.Message)
	}
	return b.String()
}

// problems collects Problems.
type problems []Problem

func (ps *problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// MaxProblems bounds the problems a ValidationError lists; a last problem at "$" says how many
// more there were.
const MaxProblems = 1000

// err returns nil when there are no problems, else a *ValidationError with the problems grouped
// by node (top-level first), keeping the order they were found in within each group.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	out := slices.Clone([]Problem(ps))
	slices.SortStableFunc(out, func(a, b Problem) int { return nodeOfPath(a.Path) - nodeOfPath(b.Path) })
	if len(out) > MaxProblems {
		more := len(out) - MaxProblems
		out = append(out[:MaxProblems], Problem{Path: "$", Message: fmt.Sprintf("%d more problems not shown", more)})
	}
	return &ValidationError{Problems: out}
}

// nodeOfPath returns N for a path under "$.nodes[N]", else -1.
func nodeOfPath(path string) int {
	rest, ok := strings.CutPrefix(path, "$.nodes[")
	if !ok {
		return -1
	}
	end := strings.IndexByte(rest, ']')
	n, err := strconv.Atoi(rest[:max(end, 0)])
	if end < 0 || err != nil {
		return -1
	}
	return n
}

// nodePath is the JSON path of node i.
func nodePath(i int) string { return "$.nodes[" + strconv.Itoa(i) + "]" }

// indexPath appends "[i]" to path.
func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// keyPath appends ".key", or `["key"]` when key is not a plain identifier.
func keyPath(path, key string) string {
	if plainKey(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func plainKey(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isLowerAlnum(c) && !(c >= 'A' && c <= 'Z') && c != '_' {
			return false
		}
	}
	return true
}
