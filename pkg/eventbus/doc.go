// Package eventbus is Braid's Kafka seam, built on segmentio/kafka-go with
// the settings that library's defaults get wrong for us (SPEC §12):
//
//   - Producer.Publish is synchronous and returns only after every record is
//     acknowledged by all in-sync replicas (RequiredAcks=RequireAll). Records
//     are partitioned by key with kafka.Hash, so one run's records stay in
//     order in one partition. A Publish sends one produce request per
//     leader broker, holding every topic and partition it leads, so a batch
//     costs about one round trip and never waits on a batch timer (kafka-go's
//     Writer would).
//   - A partition whose leader moved, is being elected or cannot be reached
//     is sent again, from its first unacknowledged record, to the leader
//     fresh metadata names, with backoff, until Config.PublishTimeout or
//     the caller's ctx ends; one key's records keep their order.
//   - EnsureTopics creates missing topics with 3 replicas and
//     min.insync.replicas=2 on a cluster of three or more brokers (one
//     replica per broker on fewer), unless Config.ReplicationFactor is set.
//   - Consumer.Fetch uses FetchMessage, never ReadMessage: nothing is
//     committed until the caller calls Commit, after the effects of the
//     messages are stored and their follow-ups published. Delivery is
//     at-least-once, so every handler must be idempotent.
//   - Consumer-group timeouts are short (3 s session, 500 ms heartbeat, 250 ms
//     join backoff) so a rebalance after a member leaves or dies takes
//     seconds, not half a minute.
//
// Records carry protobuf values and the headers event-type, schema-version
// and traceparent (see eventsv1). Records that cannot be decoded are poison:
// Decode wraps ErrPoison, and Producer.DeadLetter moves them to <topic>.dlq.
//
// The contract the services rely on is written as the interfaces
// Publisher, Fetcher and OffsetCommitter (contract.go) and checked by
// package eventbustest, which every implementation must pass.
//
// Every topic name given to this package is logical ("task.dispatch");
// Config.TopicPrefix is prepended on the wire and stripped from Message.Topic.
package eventbus
