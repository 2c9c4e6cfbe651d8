package cli

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/braidhq/braid/cmd/braid/internal/devstack"
)

// Defaults of the global flags.
const (
	defaultURL     = "http://127.0.0.1:8080"
	requestTimeout = 30 * time.Second
)

// Output formats of --output.
const (
	outputTable = "table"
	outputJSON  = "json"
)

// app is the state shared by every command: streams, global flags and the
// environment.
type app struct {
	in     io.Reader
	out    io.Writer
	errOut io.Writer
	getenv func(string) string
	// environ lists the environment (BRAID_SECRET_* for braid dev); nil: empty.
	environ func() []string

	url     string // --url
	apiKey  string // --api-key
	output  string // --output
	dataDir string // --data-dir
}

// baseURL is --url, else BRAID_URL, else the default.
func (a *app) baseURL() string {
	return cmp.Or(a.url, a.getenv("BRAID_URL"), defaultURL)
}

// dataDirectory is --data-dir, else BRAID_DATA_DIR, else .braid.
func (a *app) dataDirectory() string {
	return cmp.Or(a.dataDir, a.getenv("BRAID_DATA_DIR"), devstack.DefaultDataDir)
}

// key is --api-key, else BRAID_API_KEY, else the key braid dev stored in
// the data dir (when there is one).
func (a *app) key() (string, error) {
	if k := cmp.Or(a.apiKey, a.getenv("BRAID_API_KEY")); k != "" {
		return k, nil
	}
	return devstack.ReadKey(a.dataDirectory())
}

// client builds the API client from the global flags.
func (a *app) client() (*client.Client, error) {
	key, err := a.key()
	if err != nil {
		return nil, err
	}
	return client.New(client.Options{BaseURL: a.baseURL(), APIKey: key, Timeout: requestTimeout})
}

// checkOutput validates --output.
func (a *app) checkOutput() error {
	switch a.output {
	case outputTable, outputJSON:
		return nil
	}
	return usageErrorf("--output %q: want table or json", a.output)
}

// json reports whether --output json was asked for.
func (a *app) json() bool { return a.output == outputJSON }

// printf writes to standard output.
func (a *app) printf(format string, args ...any) { fmt.Fprintf(a.out, format, args...) }

// osEnv is the real environment.
func osEnv(name string) string { return os.Getenv(name) }
