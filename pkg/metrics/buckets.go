package metrics

// TaskBuckets are the bounds, in seconds, of the queue-wait and task
// duration histograms: Braid hands a task on in about a millisecond, and
// tasks run from under a millisecond (noop, transform) to minutes (shell,
// llm), so the buckets start at 0.5 ms and grow about 2.5× per step to 10
// minutes.
var TaskBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// RedisBuckets are the bounds, in seconds, of the Redis latency histograms:
// a loopback round trip takes about 50 µs, a pipelined batch of a thousand
// writes some milliseconds; past a second Redis is in trouble.
var RedisBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}
