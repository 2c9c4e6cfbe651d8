package e2e

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// The stack scenarios share one process stack (2 workers), started by the
// first test that needs it and stopped by TestMain after every test ran:
// starting the processes is the slow part, and every scenario uses its own
// workflow names, so they can share it and run in parallel.
var (
	sharedOnce  sync.Once
	sharedStack *Stack
	sharedStop  func()
)

// shared returns the shared stack, starting it on first use (a start
// failure fails that test, and every later caller), and dumps the stack's
// logs if t fails.
func shared(t *testing.T) *Stack {
	t.Helper()
	requireEngine(t)
	sharedOnce.Do(func() {
		s, stop := StartStack(t, stackOpts{workers: 2})
		// The stack outlives t: report later trouble on stderr, not through t.
		s.logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
		sharedStack, sharedStop = s, stop
	})
	if sharedStack == nil {
		t.Fatal("the shared stack did not start; see the first stack test's failure")
	}
	sharedStack.dumpOnFailure(t)
	return sharedStack
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedStop != nil {
		sharedStop()
	}
	stopContainers()
	removeBins()
	os.Exit(code)
}
