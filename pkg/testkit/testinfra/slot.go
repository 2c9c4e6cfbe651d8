package testinfra

import "github.com/braidhq/braid/pkg/devinfra/rediscluster"

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = rediscluster.SlotCount

// Slot is the Redis Cluster hash slot of key, computed as Redis does
// (rediscluster.Slot): CRC16-XMODEM of the hash tag — the bytes between
// the first '{' and the first '}' after it, when there are any — or else
// of the whole key, modulo SlotCount. An empty tag ("{}") does not count.
func Slot(key string) int { return rediscluster.Slot(key) }
