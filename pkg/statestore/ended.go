package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Bounds of the run an ended notice carries: a run with more hash fields
// than endedMaxFields (run and nodes together), or whose notice would
// exceed endedMaxBytes, is announced by its id alone.
const (
	endedMaxFields = 256
	endedMaxBytes  = 64 << 10
)

// endedScript announces that a run ended, carrying the run as LoadRunView
// would read it at that instant, so a waiting request answers without
// reading it again (the answer, a view of the run, shows no outputs).
//
//	KEYS[1] run hash   KEYS[2] nodes hash
//	ARGV[1] channel    ARGV[2] run id       ARGV[3] most bytes   ARGV[4] most fields
//	ARGV[5] "1": send nothing when the channel has no subscriber
//
// The message is the run id, then (unless the run is too large) a newline
// and three hashes — the run's, its nodes' and an empty one where earlier
// versions sent the outputs, so that either reads the other's notices —
// each as "<pairs>;" followed by its fields and values as
// "<length>:<bytes>" (binary-safe). Returns PUBLISH's answer (0 when
// nothing was sent).
var endedScript = redis.NewScript(`
if ARGV[5] == '1' and redis.call('PUBSUB', 'NUMSUB', ARGV[1])[2] == 0 then return 0 end
local msg = ARGV[2]
local n = redis.call('HLEN', KEYS[1]) + redis.call('HLEN', KEYS[2])
if n <= tonumber(ARGV[4]) then
  local parts = {ARGV[2], '\n'}
  for i = 1, 2 do
    local h = redis.call('HGETALL', KEYS[i])
    parts[#parts + 1] = string.format('%d;', #h / 2)
    for j = 1, #h do parts[#parts + 1] = string.format('%d:', #h[j]) .. h[j] end
  end
  parts[#parts + 1] = '0;'
  local full = table.concat(parts)
  if #full <= tonumber(ARGV[3]) then msg = full end
end
return redis.call('PUBLISH', ARGV[1], msg)
`)

// QueueEnded queues in pipe the notice, on EndedChannel, that run reached
// a terminal status. Queue it after the write that ended the run (in the
// same pipeline on one server, so the notice carries that write's
// outcome). Best effort, as pub/sub is.
//
// With heardOnly the notice is neither built nor sent while nobody is
// subscribed to the channel (the api subscribes only while requests wait
// for runs): building one reads the whole run. Only on one server: on a
// Redis Cluster a node counts its own subscribers only, while PUBLISH
// reaches those of every node.
func (k Keys) QueueEnded(ctx context.Context, pipe redis.Pipeliner, run string, heardOnly bool) *redis.Cmd {
	return endedScript.EvalSha(ctx, pipe, []string{k.Run(run), k.Nodes(run)},
		k.EndedChannel(), run, endedMaxBytes, endedMaxFields, boolArg(heardOnly))
}

// ParseEnded reads an EndedChannel message: the run id, and the run as it
// was stored when the notice was sent, as LoadRunView reads it (nil when
// the notice carries only the id: the run is too large, or the sender is
// older). Outputs an older sender included are read and dropped. A
// malformed message returns an error, with the id when one could be read.
func ParseEnded(msg string) (run string, stored *StoredRun, err error) {
	run, body, found := strings.Cut(msg, "\n")
	if !found {
		return run, nil, nil
	}
	st := &StoredRun{}
	var outputs map[string]string
	for _, h := range []*map[string]string{&st.Fields, &st.Nodes, &outputs} {
		if *h, body, err = parseHash(body); err != nil {
			return run, nil, fmt.Errorf("ended notice of run %q: %w", run, err)
		}
	}
	if body != "" {
		return run, nil, fmt.Errorf("ended notice of run %q: %d bytes after the run", run, len(body))
	}
	return run, st, nil
}

var errShortNotice = errors.New("cut short")

// parseHash reads one hash of an ended notice off the front of b.
func parseHash(b string) (map[string]string, string, error) {
	count, rest, ok := strings.Cut(b, ";")
	n, err := strconv.Atoi(count)
	if !ok || err != nil || n < 0 || n > len(rest)/4 { // a pair takes at least "0:0:"
		return nil, b, fmt.Errorf("bad field count %.20q", count)
	}
	h := make(map[string]string, n)
	for range n {
		var f, v string
		if f, rest, err = parseBytes(rest); err != nil {
			return nil, b, err
		}
		if v, rest, err = parseBytes(rest); err != nil {
			return nil, b, err
		}
		h[f] = v
	}
	return h, rest, nil
}

// parseBytes reads one "<length>:<bytes>" off the front of b.
func parseBytes(b string) (string, string, error) {
	size, rest, ok := strings.Cut(b, ":")
	n, err := strconv.Atoi(size)
	if !ok || err != nil || n < 0 {
		return "", b, fmt.Errorf("bad length %.20q", size)
	}
	if n > len(rest) {
		return "", b, errShortNotice
	}
	return rest[:n], rest[n:], nil
}
