package rediscluster

import "strings"

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = 16384

// Slot is the Redis Cluster hash slot of key, computed as Redis does
// (keyHashSlot in cluster.c): CRC16-XMODEM of the hash tag — the bytes
// between the first '{' and the first '}' after it, when there are any —
// or else of the whole key, modulo SlotCount. An empty tag ("{}") does not
// count: the whole key is hashed.
func Slot(key string) int {
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
