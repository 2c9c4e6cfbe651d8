package main

import (
	"fmt"
	"os"
	"os/signal"
	"sort"
	"time"

	"github.com/braidhq/braid/pkg/testkit/otlpsink"
)

func main() {
	s, err := otlpsink.New(true)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.URL)
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
	spans := s.Spans()
	byTrace := map[string][]otlpsink.Span{}
	for _, sp := range spans {
		byTrace[sp.TraceID] = append(byTrace[sp.TraceID], sp)
	}
	type agg struct{ starts, ends []float64 }
	aggs := map[string]*agg{}
	var order []string
	n := 0
	for _, tr := range byTrace {
		sort.Slice(tr, func(i, j int) bool { return tr[i].Start.Before(tr[j].Start) })
		t0 := tr[0].Start
		if n < 2 {
			for _, sp := range tr {
				fmt.Printf("%-12s %-40s %8.3f %8.3f\n", sp.Service, sp.Name, ms(sp.Start.Sub(t0)), ms(sp.End.Sub(t0)))
			}
			fmt.Println()
		}
		n++
		seen := map[string]int{}
		for _, sp := range tr {
			k := sp.Service + " " + sp.Name
			seen[k]++
			if seen[k] > 1 {
				k = fmt.Sprintf("%s #%d", k, seen[k])
			}
			a := aggs[k]
			if a == nil {
				a = &agg{}
				aggs[k] = a
				order = append(order, k)
			}
			a.starts = append(a.starts, ms(sp.Start.Sub(t0)))
			a.ends = append(a.ends, ms(sp.End.Sub(t0)))
		}
	}
	sort.Slice(order, func(i, j int) bool { return med(aggs[order[i]].starts) < med(aggs[order[j]].starts) })
	fmt.Println("traces", n)
	for _, k := range order {
		a := aggs[k]
		fmt.Printf("%-60s n=%4d start %8.3f end %8.3f\n", k, len(a.starts), med(a.starts), med(a.ends))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func med(x []float64) float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y[len(y)/2]
}
