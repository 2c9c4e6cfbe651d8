package handler

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/worker"
)

// Handler names returned by Builtins.
const (
	NameNoop      = "noop"
	NameShell     = "shell"
	NameHTTP      = "http"
	NameLLM       = "llm"
	NameTransform = "transform"
	NameSimulate  = "simulate"
)

// Default values applied by Builtins for zero Config fields.
const (
	DefaultLLMModel       = "gpt-4o-mini"
	DefaultMaxOutputBytes = 1 << 20 // 1 MiB
	DefaultShellPath      = "/bin/sh"
	// DefaultPath is a shell task's PATH when the worker has none.
	DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// BaseEnv are the variables of the worker's environment that every shell
// task gets: what programs expect to find, nothing that configures Braid.
var BaseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TMPDIR"}

// Config configures the built-in handlers. The zero value is usable: every
// zero field takes the default documented next to it.
type Config struct {
	// LLMBaseURL is the base URL of an OpenAI-compatible API (BRAID_LLM_BASE_URL),
	// e.g. "https://api.openai.com/v1"; the llm handler POSTs to
	// {LLMBaseURL}/chat/completions. Empty: the llm handler returns a
	// deterministic mock completion and makes no network call.
	LLMBaseURL string
	// LLMAPIKey is sent as "Authorization: Bearer <key>" (BRAID_LLM_API_KEY).
	// It is never logged, never put in an error and not passed to shell commands.
	LLMAPIKey string
	// LLMModel is the model used when a node's config sets none.
	// Default DefaultLLMModel ("gpt-4o-mini").
	LLMModel string
	// Egress decides which addresses the http and llm handlers may reach.
	// The zero value refuses loopback, private and other internal ranges;
	// see Egress. The llm handler may also always reach LLMBaseURL's host:port.
	Egress Egress
	// MaxOutputBytes caps, in bytes, each captured stdout, stderr and HTTP
	// response body; the excess is replaced by "…[truncated N bytes]".
	// Default DefaultMaxOutputBytes (1 MiB).
	MaxOutputBytes int
	// PassEnv names the variables of the worker's environment that shell
	// tasks get besides BaseEnv (BRAID_WORKER_PASS_ENV): exact names, or a
	// prefix ending in "*" ("AWS_*"). BRAID_* names are refused (Validate):
	// they are the worker's own configuration.
	PassEnv []string
	// Ledger, when set, is a file where the simulate handler appends one
	// LedgerLine per execution before it runs (BRAID_WORKER_LEDGER): the
	// test suites count executions with it. Set by the operator, never by a
	// workflow.
	Ledger string
	// ShellPath is the shell the shell handler runs as `<ShellPath> -c command`
	// unless a node's config names another. Default DefaultShellPath ("/bin/sh").
	ShellPath string
}

// Validate reports a Config that cannot work: a negative MaxOutputBytes, an
// LLMBaseURL that is not an absolute http(s) URL, or an Egress.Own listener
// that is not host:port. The error never holds LLMAPIKey.
func (c Config) Validate() error {
	if c.MaxOutputBytes < 0 {
		return fmt.Errorf("handler config: MaxOutputBytes must be >= 0, got %d", c.MaxOutputBytes)
	}
	if err := checkPassEnv(c.PassEnv); err != nil {
		return err
	}
	if c.LLMBaseURL != "" {
		if err := checkHTTPURL(c.LLMBaseURL); err != nil {
			return fmt.Errorf("handler config: LLMBaseURL: %w", err)
		}
	}
	if err := c.Egress.validate(); err != nil {
		return fmt.Errorf("handler config: %w", err)
	}
	return nil
}

// envName is a variable name, optionally a prefix ending in "*".
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$|^\*$`)

// checkPassEnv refuses malformed names, "*" alone, and the worker's own
// BRAID_* configuration.
func checkPassEnv(names []string) error {
	for _, n := range names {
		switch {
		case !envName.MatchString(n):
			return fmt.Errorf("handler config: PassEnv: %q is not a variable name (or a prefix ending in *)", n)
		case n == "*" || strings.HasPrefix("BRAID_", strings.TrimSuffix(n, "*")) || strings.HasPrefix(n, "BRAID_"):
			return fmt.Errorf("handler config: PassEnv: %q would pass the worker's own configuration (BRAID_*) to tasks; name the variables tasks need", n)
		}
	}
	return nil
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.LLMModel = cmp.Or(c.LLMModel, DefaultLLMModel)
	c.MaxOutputBytes = cmp.Or(max(c.MaxOutputBytes, 0), DefaultMaxOutputBytes)
	c.ShellPath = cmp.Or(c.ShellPath, DefaultShellPath)
	return c
}

// Builtins returns the built-in handlers keyed by name: "noop", "shell",
// "http", "llm", "transform" and "simulate". Zero Config fields take their
// defaults; call Config.Validate first to reject a bad Config early (an invalid
// LLMBaseURL otherwise fails each llm attempt permanently).
func Builtins(cfg Config) map[string]worker.Handler {
	cfg = cfg.withDefaults()
	return map[string]worker.Handler{
		NameNoop:      worker.HandlerFunc(handleNoop),
		NameShell:     &shellHandler{cfg: cfg},
		NameHTTP:      &httpHandler{cfg: cfg, client: newHTTPClient(newGuard(cfg.Egress))},
		NameLLM:       &llmHandler{cfg: cfg, client: newLLMClient(cfg)},
		NameTransform: &transformHandler{cache: newJQCache(jqCacheSize)},
		NameSimulate:  simulate(cfg),
	}
}

// simulate is the simulate handler, ledgered when cfg.Ledger is set.
func simulate(cfg Config) worker.Handler {
	if cfg.Ledger == "" {
		return worker.HandlerFunc(handleSimulate)
	}
	return ledgered(&ledger{path: cfg.Ledger}, handleSimulate)
}

// maxRedirects bounds the redirects the handlers follow.
const maxRedirects = 10

// Time limits of every http and llm call. The attempt's context and a
// node's own timeout usually end a call sooner; these bound it anyway.
const (
	tlsHandshakeTimeout   = 10 * time.Second
	responseHeaderTimeout = 5 * time.Minute  // LLM completions answer only when done
	callTimeout           = 10 * time.Minute // the whole call, reading the body included
)

// newHTTPClient returns a client whose every connection g checks. It uses
// no proxy, not even one from HTTP_PROXY/HTTPS_PROXY: through a proxy the
// only address dialled would be the proxy's, and the guard could not see
// where the request really goes.
func newHTTPClient(g *guard) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = g.dialContext()
	t.TLSHandshakeTimeout = tlsHandshakeTimeout
	t.ResponseHeaderTimeout = responseHeaderTimeout
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: tracedTransport{t}, Timeout: callTimeout, CheckRedirect: checkRedirect}
}

// newLLMClient is the llm handler's client: the http handler's guard plus
// the operator's endpoint, LLMBaseURL's host:port, even on a refused range.
func newLLMClient(c Config) *http.Client {
	var extra []allowRule
	if r, ok := llmAllowRule(c.LLMBaseURL); ok {
		extra = append(extra, r)
	}
	return newHTTPClient(newGuard(c.Egress, extra...))
}

// checkRedirect follows at most maxRedirects redirects, to http(s) URLs
// only. Where a redirect may go is the guard's to decide, at dial time.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to scheme %q refused", req.URL.Scheme)
	}
	return nil
}

// checkHTTPURL accepts absolute http and https URLs with a host.
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q not allowed, want http or https", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("URL has no host")
	}
	return nil
}
