package template

import (
	"fmt"
	"testing"
)

func TestZZBig(t *testing.T) {
	for seed := uint64(200); seed < 216; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			t.Log(seed, runRandomContexts(t, seed, 300))
		})
	}
}
