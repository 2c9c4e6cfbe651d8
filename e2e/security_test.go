package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// TestSecurityNothingLeaks attacks a stack whose workers hold everything a
// careless deployment gives them (the api keys, the Redis URL, a cloud
// credential, as when every service shares one environment) and a secret
// for tasks:
//   - a shell task dumping its environment sees none of the worker's
//     configuration or credentials;
//   - a task given << secret.API_TOKEN >> gets the value (its SHA-256 is
//     checked) but the value appears nowhere: not in any Redis key (every
//     key of the stack scanned), any Kafka record (every topic read from
//     the start), any process log, or any answer of the api (run, tasks,
//     logs, events, workers), where it shows as ***;
//   - a read key obtains no write key and no secret through any endpoint.
func TestSecurityNothingLeaks(t *testing.T) {
	t.Parallel()
	secret := "tok-" + randomHex(t, 16)
	cloud := "aws-" + randomHex(t, 12)
	var s *Stack
	f := startFaultStack(t, stackOpts{workers: 1, workerEnv: func(int) []string {
		return []string{"BRAID_SECRET_API_TOKEN=" + secret, "AWS_SECRET_ACCESS_KEY=" + cloud,
			"BRAID_API_KEYS=leak:" + leakedKey + ":write"}
	}})
	s = f.Stack
	c := s.client(t)
	def := fmt.Sprintf(`{"name": %q, "nodes": [
		{"id": "envdump", "handler": "shell", "config": {"command": "env", "output": "text"}},
		{"id": "use", "handler": "shell", "config": {
			"command": "echo \"token=$TOKEN\"; echo \"stderr $TOKEN\" >&2; printf %%s \"$TOKEN\" | sha256sum | cut -c1-64",
			"env": {"TOKEN": "<< secret.API_TOKEN >>"}}},
		{"id": "fail", "handler": "shell", "depends_on": ["use"], "trigger_rule": "all_done",
			"retry": {"max_attempts": 1},
			"config": {"command": "echo \"bad $TOKEN\" >&2; exit 3", "env": {"TOKEN": "x-<< secret.API_TOKEN >>-y"}}}
	]}`, testinfraName(t, "sec"))
	name, _ := c.register([]byte(def))
	id := c.start(name, `{}`)
	r := c.waitDone(id, runTimeout)
	require.Equal(t, "failed", r.Status, "the last node fails on purpose: %s", r.Error)

	dump := taskOutput(c, id, "envdump")
	for _, leak := range []string{s.Key, s.ReadKey, leakedKey, cloud, secret, "BRAID_API_KEYS", "BRAID_REDIS_URL",
		"BRAID_KAFKA_BROKERS", "BRAID_SECRET_", "AWS_SECRET_ACCESS_KEY", s.RedisURL} {
		requireAbsent(t, dump, leak, "a shell task's environment holds the worker's %q", leak)
	}
	require.Contains(t, dump, "BRAID_RUN_ID="+id, "the task variables are there")
	sum := sha256.Sum256([]byte(secret))
	use := taskOutput(c, id, "use")
	require.Contains(t, use, "token=***", "the secret is masked in the output")
	require.Contains(t, use, hex.EncodeToString(sum[:]), "the task received the secret's value")

	answers := apiAnswers(t, s, id, s.Key)
	readAnswers := apiAnswers(t, s, id, s.ReadKey)
	require.Contains(t, readAnswers, "token=***", "the read key sees the masked output")
	require.Contains(t, readAnswers, "bad x-***-y", "the failed task's log is masked")
	for _, leak := range []string{secret, s.Key, leakedKey} {
		requireAbsent(t, readAnswers, leak, "a read key obtained %q from the api", leak)
	}
	requireAbsent(t, answers, secret, "the api answered the secret")

	requireAbsent(t, redisContents(t, f.rdb, statestore.Prefix+s.Namespace), secret, "the secret is stored in Redis")
	requireAbsent(t, kafkaContents(t, s.Kafka, s.TopicPrefix), secret, "the secret is in a Kafka record")
	for _, p := range s.procs {
		requireAbsent(t, p.log(), secret, "the secret is in the %s log", p.name)
	}
}

// leakedKey is the write key the workers of TestSecurityNothingLeaks hold
// in their environment.
const leakedKey = "k-leaked-write-key-0123456789"

// testinfraName is a workflow name unique to t.
func testinfraName(t *testing.T, prefix string) string { return prefix + "-" + randomHex(t, 4) }

// taskOutput is node's output (GET /runs/{id}/tasks/{node}) as JSON text.
func taskOutput(c *apiClient, id, node string) string {
	c.t.Helper()
	var task struct {
		Output json.RawMessage `json:"output"`
	}
	c.call(http.MethodGet, "/runs/"+id+"/tasks/"+node, nil, http.StatusOK, &task)
	require.NotEmpty(c.t, task.Output, "task %s has no output", node)
	return string(task.Output)
}

// apiAnswers is everything the api answers key about run id: the run,
// its tasks and their logs, its events (SSE, read for a bounded time), the
// runs, workflows and workers lists.
func apiAnswers(t *testing.T, s *Stack, id, key string) string {
	t.Helper()
	c := &apiClient{t: t, base: s.URL, key: key, hc: &http.Client{Timeout: httpTimeout}}
	var b strings.Builder
	get := func(path string) {
		status, body, err := c.raw(http.MethodGet, path, nil)
		require.NoError(t, err, path)
		require.Equal(t, http.StatusOK, status, "GET %s: %s", path, body)
		b.Write(body)
	}
	for _, p := range []string{"/runs/" + id, "/runs/" + id + "/tasks", "/runs", "/workflows", "/workers", "/whoami"} {
		get(p)
	}
	for _, node := range []string{"envdump", "use", "fail"} {
		get("/runs/" + id + "/tasks/" + node)
		get("/runs/" + id + "/tasks/" + node + "/logs")
	}
	b.WriteString(readSSE(t, s.URL+"/runs/"+id+"/events", key))
	return b.String()
}

// readSSE reads an event stream for at most two seconds.
func readSSE(t *testing.T, url, key string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp := openEvents(t, ctx, url, key)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		require.NoError(t, err)
	}
	require.NotEmpty(t, body, "the event stream sent nothing")
	return string(body)
}

// openEvents opens the event stream at url with key; it must be answered
// 200. ctx bounds the whole stream.
func openEvents(t *testing.T, ctx context.Context, url, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		t.Fatalf("event stream %s: status %d", url, resp.StatusCode)
	}
	return resp
}

// redisContents is every value of every key starting with prefix, by type.
// scanKeys lists the keys matching pattern: SCAN on one server, on every
// master of a cluster.
func scanKeys(t *testing.T, rdb redis.UniversalClient, pattern string) []string {
	t.Helper()
	out, err := statestore.ScanKeys(context.Background(), rdb, pattern)
	require.NoError(t, err)
	return out
}

func redisContents(t *testing.T, rdb redis.UniversalClient, prefix string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	keys := 0
	for _, k := range scanKeys(t, rdb, prefix+"*") {
		keys++
		typ, err := rdb.Type(ctx, k).Result()
		require.NoError(t, err)
		b.WriteString(k + "\n")
		switch typ {
		case "string":
			v, _ := rdb.Get(ctx, k).Result()
			b.WriteString(v)
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				b.WriteString(f + "=" + v + "\n")
			}
		case "list":
			b.WriteString(strings.Join(rdb.LRange(ctx, k, 0, -1).Val(), "\n"))
		case "set":
			b.WriteString(strings.Join(rdb.SMembers(ctx, k).Val(), "\n"))
		case "zset":
			b.WriteString(strings.Join(rdb.ZRange(ctx, k, 0, -1).Val(), "\n"))
		case "stream":
			for _, m := range rdb.XRange(ctx, k, "-", "+").Val() {
				b.WriteString(fmt.Sprint(m.Values))
			}
		default:
			t.Fatalf("key %s has type %s, which the scan does not read", k, typ)
		}
		b.WriteString("\n")
	}
	require.Greater(t, keys, 10, "the scan found too few keys to mean anything")
	return b.String()
}

// kafkaContents is the key, headers and value of every record of every
// topic with prefix, read from the first offset to the last.
func kafkaContents(t *testing.T, broker, prefix string) string {
	t.Helper()
	conn, err := kafka.Dial("tcp", broker)
	require.NoError(t, err)
	defer conn.Close()
	parts, err := conn.ReadPartitions()
	require.NoError(t, err)
	var b bytes.Buffer
	records := 0
	for _, p := range parts {
		if !strings.HasPrefix(p.Topic, prefix) {
			continue
		}
		records += readAllOf(t, broker, p, &b)
	}
	require.Greater(t, records, 5, "too few records read to mean anything")
	return b.String()
}

// readAllOf appends every record of p to b and returns how many.
func readAllOf(t *testing.T, broker string, p kafka.Partition, b *bytes.Buffer) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	leader := net.JoinHostPort(p.Leader.Host, strconv.Itoa(p.Leader.Port))
	conn, err := kafka.DialLeader(ctx, "tcp", leader, p.Topic, p.ID)
	require.NoError(t, err)
	defer conn.Close()
	first, last, err := conn.ReadOffsets()
	require.NoError(t, err)
	if last <= first {
		return 0
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{broker}, Topic: p.Topic, Partition: p.ID, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	require.NoError(t, r.SetOffset(first))
	n := 0
	for off := first; off < last; {
		m, err := r.ReadMessage(ctx)
		require.NoError(t, err, "read %s/%d at %d of %d", p.Topic, p.ID, off, last)
		b.Write(m.Key)
		b.Write(m.Value)
		for _, h := range m.Headers {
			b.WriteString(h.Key)
			b.Write(h.Value)
		}
		off, n = m.Offset+1, n+1
	}
	return n
}

// requireAbsent fails when needle occurs in haystack, quoting only the
// surroundings of its first occurrence (haystacks are whole API answers,
// logs and stores).
func requireAbsent(t *testing.T, haystack, needle string, msg string, args ...any) {
	t.Helper()
	i := strings.Index(haystack, needle)
	if i < 0 {
		return
	}
	from, to := max(i-120, 0), min(i+len(needle)+120, len(haystack))
	t.Fatalf("%s\nfound %q in: …%s…", fmt.Sprintf(msg, args...), needle, haystack[from:to])
}
