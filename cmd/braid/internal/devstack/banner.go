package devstack

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/braidhq/braid/services/orchestrator/orchsvc"
)

// exampleFile is the workflow the banner's examples register.
const exampleFile = "examples/seed-000-example-workflow.json"

// exampleWorkflow is the name registered from exampleFile.
const exampleWorkflow = "example_workflow"

var bannerTmpl = template.Must(template.New("banner").Parse(`
Braid dev stack is up.
  Web UI   {{.URL}}/ui/  (sign in with the API key below; "Load examples" registers the examples)
  API      {{.URL}}
  Kafka    {{.Kafka}}  (data in {{.KafkaDir}})
  Redis    {{.Redis}}
  API key  {{.KeyLine}}
  Egress   {{.Egress}}
  Runs     {{.Retention}}

Try it with curl (from the repository root):
  export BRAID_URL={{.URL}} BRAID_API_KEY={{.KeyValue}}
  curl -sS -X POST "$BRAID_URL/workflows" -H "X-API-Key: $BRAID_API_KEY" \
       -H 'Content-Type: application/json' --data-binary @{{.Example}}
  curl -sS -X POST "$BRAID_URL/workflows/{{.Workflow}}/runs" -H "X-API-Key: $BRAID_API_KEY" \
       -H 'Content-Type: application/json' -d '{"input":{}}'
  curl -sS "$BRAID_URL/runs/<run_id>" -H "X-API-Key: $BRAID_API_KEY"

Or with the CLI:
  go run ./cmd/braid apply -f {{.Example}}
  go run ./cmd/braid run {{.Workflow}} --watch

A worker of your own (pkg/worker; README "Worker pools and handlers of your own") reaches this stack with:
  export BRAID_KAFKA_BROKERS={{.Kafka}} BRAID_REDIS_URL="{{.WorkerRedisURL}}"

Ctrl-C stops the stack; state stays in {{.DataDir}}, so the next start resumes unfinished runs.
`))

// bannerData fills bannerTmpl.
type bannerData struct {
	URL, Kafka, KafkaDir, Redis, KeyLine, KeyValue, Example, Workflow, DataDir, Egress, Retention string
	// WorkerRedisURL is the Redis URL for processes of the user's, its
	// password read from its file by the shell (never printed).
	WorkerRedisURL string
}

// printBanner tells the user where everything is and how to start a run.
// A key from BRAID_API_KEYS is never printed.
func printBanner(w io.Writer, cfg Config, inf *infra, keys apiKeys) {
	d := bannerData{
		URL:            "http://" + cfg.APIAddr,
		Kafka:          inf.kafkaAddr,
		KafkaDir:       filepath.Join(cfg.DataDir, "kafka"),
		Redis:          redisLine(cfg, inf),
		KeyLine:        keys.key + "  (kept in " + KeyPath(cfg.DataDir) + "; the braid CLI reads it from there)",
		KeyValue:       keys.key,
		Example:        exampleFile,
		Workflow:       exampleWorkflow,
		DataDir:        cfg.DataDir,
		Egress:         egressLine(cfg),
		Retention:      retentionLine(cfg.RunRetention),
		WorkerRedisURL: "redis://" + inf.redis.Addr() + "/0",
	}
	if inf.redisPassword != "" {
		d.WorkerRedisURL = "redis://:$(cat " + shellQuote(filepath.Join(cfg.DataDir, RedisPasswordFile)) + ")@" + inf.redis.Addr() + "/0"
	}
	if keys.key == "" {
		d.KeyLine = "from BRAID_API_KEYS (not shown)"
		d.KeyValue = "<one of your BRAID_API_KEYS keys>"
	}
	_ = bannerTmpl.Execute(w, d)
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and ./_-: a data dir with a space or a quote still works.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// retentionLine says how long ended runs are kept (d as Config.RunRetention).
func retentionLine(d time.Duration) string {
	const how = " (BRAID_RUN_RETENTION; 0 keeps them)"
	switch {
	case d < 0:
		return "ended runs are kept for ever (BRAID_RUN_RETENTION=0)"
	case d == 0:
		d = orchsvc.DefaultRunRetention
	}
	s := d.String()
	if d%(24*time.Hour) == 0 {
		s = fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return "ended runs are deleted " + s + " after they end" + how
}

// redisLine describes the Redis in use, loudly when it is not durable.
func redisLine(cfg Config, inf *infra) string {
	if !inf.redis.Durable() {
		return inf.redis.Addr() + "  (EMBEDDED IN-MEMORY: STATE WILL NOT SURVIVE A RESTART)"
	}
	return inf.redis.Addr() + "  (redis-server, AOF in " + filepath.Join(cfg.DataDir, "redis") + ")"
}

// printInfra prints the broker and Redis addresses and the environment that
// points separately started service binaries at them.
func printInfra(w io.Writer, inf *infra) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nBraid infrastructure is up (--only infra).\n")
	fmt.Fprintf(&b, "  Kafka  %s\n  Redis  %s\n\n", inf.kafkaAddr, inf.redis.Addr())
	fmt.Fprintf(&b, "Point the service binaries at it:\n")
	fmt.Fprintf(&b, "export BRAID_KAFKA_BROKERS=%s\n", inf.kafkaAddr)
	fmt.Fprintf(&b, "export BRAID_REDIS_URL=%s\n", inf.redisURL())
	fmt.Fprintf(&b, "\nthen e.g. `go run ./services/orchestrator`, `go run ./services/worker` and\n")
	fmt.Fprintf(&b, "`BRAID_API_KEYS=admin:<key>:write go run ./services/api`. Ctrl-C stops the infrastructure.\n")
	_, _ = io.WriteString(w, b.String())
}
