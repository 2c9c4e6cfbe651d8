package statestore

import (
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
)

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = 16384

// MaxIndexShards bounds Keys.Shards.
const MaxIndexShards = 256

// HashSlot is the Redis Cluster hash slot of key, computed as Redis does
// (keyHashSlot in cluster.c): CRC16-XMODEM of the hash tag — the bytes
// between the first '{' and the first '}' after it, when there are any —
// or else of the whole key, modulo SlotCount. An empty tag ("{}") does not
// count: the whole key is hashed.
func HashSlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	return int(crc16(key) % SlotCount)
}

// crc16 is CRC16-XMODEM (polynomial 0x1021, initial value 0, no
// reflection), the checksum Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := range len(s) {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// The cross-run indexes — every run, the active and busy runs, each workflow's
// runs, the durable timers — are written on every run start and end. On a
// Redis Cluster one key each would put all of that on one master, so with
// Keys.Shards = N > 1 each is N keys: a run's entries go to shard
// fnv32a(run id) mod N, and readers gather every shard. All families of
// one shard share one hash tag, so a run's index updates go to one node.
// Shard s's tag is "ix.<s>.<i>" for the first i whose slot lies in the
// s-th of N equal slot ranges, which spreads the shards evenly over masters
// given contiguous slot ranges (as redis-cli --cluster create gives them).
// N = 1 (or 0) keeps the unsharded key names of single-server deployments.

// shards is the number of index shards (at least 1).
func (k Keys) shards() int { return max(k.Shards, 1) }

// Sharded reports whether the indexes are sharded (Shards > 1).
func (k Keys) Sharded() bool { return k.shards() > 1 }

// ShardOf is the index shard of run.
func (k Keys) ShardOf(run string) int {
	if !k.Sharded() {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(run))
	return int(h.Sum32() % uint32(k.shards()))
}

// shardKey is index family suffix's key in shard s: base+suffix when
// unsharded, base+"{tag}:"+suffix otherwise.
func (k Keys) shardKey(s int, suffix string) string {
	if !k.Sharded() {
		return k.base() + suffix
	}
	return k.base() + "{" + shardTag(s, k.shards()) + "}:" + suffix
}

// allShards lists suffix's key in every shard.
func (k Keys) allShards(suffix string) []string {
	out := make([]string, k.shards())
	for s := range out {
		out[s] = k.shardKey(s, suffix)
	}
	return out
}

var (
	tagsMu sync.Mutex
	tags   = map[int][]string{}
)

// shardTag is shard s's hash tag of n shards (see above), computed once
// per n.
func shardTag(s, n int) string {
	tagsMu.Lock()
	defer tagsMu.Unlock()
	t, ok := tags[n]
	if !ok {
		t = make([]string, n)
		for i := range n {
			lo, hi := i*SlotCount/n, (i+1)*SlotCount/n
			for j := 0; ; j++ {
				tag := "ix." + strconv.Itoa(i) + "." + strconv.Itoa(j)
				if sl := HashSlot(tag); sl >= lo && sl < hi {
					t[i] = tag
					break
				}
			}
		}
		tags[n] = t
	}
	return t[s]
}

// DefaultClusterIndexShards is the index shard count on a Redis Cluster
// when BRAID_REDIS_INDEX_SHARDS is not set: about five per master of a
// three-master cluster.
const DefaultClusterIndexShards = 16
