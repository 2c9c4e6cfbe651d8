package procstack

import (
	"os"
	"strings"
)

// BaseEnv is the environment every process of a stack inherits: this
// process's, without any BRAID_* variable, so the caller's settings cannot
// leak into the stack.
func BaseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BRAID_") {
			out = append(out, kv)
		}
	}
	return out
}
