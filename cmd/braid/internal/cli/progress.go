package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/braidhq/braid/cmd/braid/internal/client"
)

// barWidth is the number of cells in the progress bar.
const barWidth = 30

// stateOrder is the order in which node states are listed.
var stateOrder = []string{"succeeded", "failed", "cancelled", "skipped", "running", "queued", "retry_wait", "pending"}

// terminalNode reports whether a node state is final.
func terminalNode(state string) bool {
	switch state {
	case "succeeded", "failed", "skipped", "cancelled":
		return true
	}
	return false
}

// terminalRun reports whether a run status is final.
func terminalRun(status string) bool {
	return status == "succeeded" || status == "failed" || status == "cancelled"
}

// progressLine renders a run as one line: a bar of finished nodes, the
// count, the run status and the count of nodes per state, e.g.
//
//	[##########----------]  2/4  running  succeeded 2 · running 1 · pending 1
func progressLine(run client.Run) string {
	counts := map[string]int{}
	done := 0
	for _, n := range run.Nodes {
		counts[n.State]++
		if terminalNode(n.State) {
			done++
		}
	}
	total := len(run.Nodes)
	filled := 0
	if total > 0 {
		filled = done * barWidth / total
	}
	bar := strings.Repeat("#", filled) + strings.Repeat("-", barWidth-filled)
	return fmt.Sprintf("[%s] %3d/%-3d %-10s %s", bar, done, total, run.Status, stateCounts(counts))
}

// stateCounts lists non-zero counts in stateOrder, then unknown states.
func stateCounts(counts map[string]int) string {
	var parts []string
	seen := map[string]bool{}
	for _, s := range stateOrder {
		seen[s] = true
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s, counts[s]))
		}
	}
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		if !seen[s] && counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s, counts[s]))
		}
	}
	return strings.Join(parts, " · ")
}
