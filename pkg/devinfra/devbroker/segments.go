package devbroker

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// PrepareSegments makes a persisting kfake cluster create each new
// partition's first segment files when its topic is created, not when the
// partition's first record is produced.
//
// kfake opens a partition's files lazily: its first produced batch makes
// the partition's directory and creates two files, from the one goroutine
// that serves every request of the broker. Those three system calls took
// 1–2 ms together on a machine's /tmp (0.1–0.3 ms elsewhere), so the first
// runs of a fresh stack waited, one hop after another, while 30 partitions
// were touched for the first time. Created here, at CreateTopics (start-up),
// the first write opens an existing file instead.
//
// It watches CreateTopics requests (a control function that handles none,
// so kfake keeps it and creates the topic as before) and, for every
// partition whose directory does not exist yet — a partition never written, so its first batch starts at
// offset 0 — creates <dataDir>/partitions/<topic>-<p>/0.dat and 0.idx,
// empty, the names kfake's persistBatchToSegment opens (an empty segment
// is dropped on load). TestPrepareSegmentsAreTheFilesKfakeWrites holds
// that layout to the pinned kfake version. A failure costs only the
// optimisation: kfake creates what is missing itself.
func PrepareSegments(c *kfake.Cluster, dataDir string, defaultPartitions int) {
	c.ControlKey(kmsg.CreateTopics.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r, ok := req.(*kmsg.CreateTopicsRequest)
		if !ok || r.ValidateOnly {
			return nil, nil, false
		}
		for _, t := range r.Topics {
			n := int(t.NumPartitions)
			if len(t.ReplicaAssignment) > 0 {
				n = len(t.ReplicaAssignment)
			}
			if n <= 0 {
				n = defaultPartitions
			}
			createSegments(dataDir, t.Topic, n)
		}
		return nil, nil, false
	})
}

// maxPreparedPartitions bounds the files one CreateTopics request makes.
const maxPreparedPartitions = 1024

// createSegments creates the first segment files of topic's partitions
// 0..n-1 whose directories do not exist, as far as it can: whatever it
// cannot create, kfake creates at the partition's first record.
func createSegments(dataDir, topic string, n int) {
	if topic == "" || n > maxPreparedPartitions {
		return
	}
	for p := range n {
		dir := partitionDir(dataDir, topic, p)
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			continue // written before (or unreadable): kfake knows best
		}
		if os.MkdirAll(dir, 0o755) != nil {
			return
		}
		for _, name := range []string{"0.dat", "0.idx"} {
			if f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				_ = f.Close()
			}
		}
	}
}

// partitionDir is kfake's directory of a partition's segments (its partDir).
func partitionDir(dataDir, topic string, p int) string {
	return filepath.Join(dataDir, "partitions", fmt.Sprintf("%s-%d", url.PathEscape(topic), p))
}
