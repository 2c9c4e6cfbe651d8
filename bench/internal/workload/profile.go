package workload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// cpuProfile fetches a CPU profile of seconds from the pprof server at addr
// into path. It blocks for the profile's duration.
func cpuProfile(ctx context.Context, addr, path string, seconds int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(seconds+30)*time.Second)
	defer cancel()
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cpu profile %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("cpu profile %s answered %d: %s", url, resp.StatusCode, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("cpu profile %s: %w", url, err)
	}
	return f.Close()
}

// freePprofAddr is a free loopback address for the orchestrator's pprof.
func freePprofAddr() (string, error) { return procstack.FreeAddr() }
