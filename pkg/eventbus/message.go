package eventbus

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ErrPoison marks a record that can never be handled: its value does not
// decode, or its event-type header names another message. Callers dead-letter
// such records (Producer.DeadLetter) and commit them instead of retrying.
var ErrPoison = errors.New("poison message")

// ErrClosed is returned by the methods of a closed Producer or Consumer.
var ErrClosed = errors.New("eventbus: closed")

// Message is one Kafka record. Messages returned by Consumer.Fetch carry
// their Partition and Offset and can be passed to Consumer.Commit; messages
// built by the caller (NewMessage or a literal) cannot. Headers may be
// modified before Publish, e.g. to set eventsv1.HeaderTraceparent.
type Message struct {
	// Topic is the logical topic name, without Config.TopicPrefix.
	Topic string
	// Key selects the partition (kafka.Hash); Braid keys by run id.
	Key []byte
	// Value is the protobuf-encoded payload.
	Value []byte
	// Headers are the record headers; a repeated header keeps its last value.
	Headers Headers
	// Partition and Offset locate a fetched record; zero on messages to publish.
	Partition int
	Offset    int64

	raw kafka.Message // the fetched record, for Commit
}

// NewMessage encodes m (deterministic protobuf) as a record for topic keyed
// by key, with the headers event-type (m's full name) and schema-version. It
// sets no traceparent; add one to Headers when a span is at hand.
func NewMessage(topic, key string, m proto.Message) (Message, error) {
	name := m.ProtoReflect().Descriptor().FullName()
	value, err := marshal(m)
	if err != nil {
		return Message{}, fmt.Errorf("encode %s topic=%s key=%s: %w", name, topic, key, err)
	}
	h := make(Headers, 2, 3) // room for a traceparent
	h[0] = Header{Key: eventsv1.HeaderEventType, Value: eventType(name)}
	h[1] = Header{Key: eventsv1.HeaderSchemaVersion, Value: schemaVersion}
	return Message{Topic: topic, Key: []byte(key), Value: value, Headers: h}, nil
}

// fastMarshaler is a message with generated MarshalVT (proto-events'
// messages): protobuf's encoding, about 3× faster than proto.Marshal, and
// exactly its bytes for a message that Conforms (UTF-8 strings, no unknown
// field; eventsv1.FuzzVTMatchesProto).
type fastMarshaler interface {
	MarshalVT() ([]byte, error)
	Conforms() bool
}

// marshal encodes m (deterministic protobuf): with MarshalVT when m
// conforms, else with proto.Marshal, which refuses a string that is not
// UTF-8 as it always has.
func marshal(m proto.Message) ([]byte, error) {
	if f, ok := m.(fastMarshaler); ok && f.Conforms() {
		return f.MarshalVT()
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// schemaVersion is the schema-version header's value, shared by every
// message (header values are never modified in place).
var schemaVersion = []byte(eventsv1.SchemaVersion)

// eventTypes maps a message type's full name to its event-type header
// value, shared by every message of the type.
var eventTypes sync.Map // protoreflect.FullName → []byte

func eventType(name protoreflect.FullName) []byte {
	if v, ok := eventTypes.Load(name); ok {
		return v.([]byte)
	}
	v, _ := eventTypes.LoadOrStore(name, []byte(name))
	return v.([]byte)
}

// Decode unmarshals m's value into into. When m has an event-type header it
// must name into's message type. Every error wraps ErrPoison: retrying cannot
// fix it. Unknown fields are kept, so newer producers stay readable.
func Decode(m Message, into proto.Message) error {
	want := string(into.ProtoReflect().Descriptor().FullName())
	if got, ok := m.Headers.value(eventsv1.HeaderEventType); ok && string(got) != want {
		return fmt.Errorf("decode topic=%s partition=%d offset=%d: event-type %q, want %q: %w",
			m.Topic, m.Partition, m.Offset, got, want, ErrPoison)
	}
	if err := proto.Unmarshal(m.Value, into); err != nil {
		return fmt.Errorf("decode %s topic=%s partition=%d offset=%d: %w: %w",
			want, m.Topic, m.Partition, m.Offset, ErrPoison, err)
	}
	return nil
}

// toKafka returns the wire record of m under cfg's topic prefix.
func (c Config) toKafka(m Message) kafka.Message {
	km := kafka.Message{Topic: c.topic(m.Topic), Key: m.Key, Value: m.Value}
	if len(m.Headers) > 0 {
		km.Headers = make([]kafka.Header, len(m.Headers))
		for i, h := range m.Headers {
			km.Headers[i] = kafka.Header{Key: h.Key, Value: h.Value}
		}
	}
	return km
}

// fromKafka returns the Message of a fetched record, stripping cfg's prefix.
func (c Config) fromKafka(km kafka.Message) Message {
	m := Message{
		Topic:     strings.TrimPrefix(km.Topic, c.TopicPrefix),
		Key:       km.Key,
		Value:     km.Value,
		Partition: km.Partition,
		Offset:    km.Offset,
		raw:       km,
	}
	if len(km.Headers) > 0 {
		m.Headers = make(Headers, len(km.Headers))
		for i, h := range km.Headers {
			m.Headers[i] = Header{Key: h.Key, Value: h.Value}
		}
	}
	return m
}
