package eventbus

import (
	"errors"
	"testing"

	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func TestNewMessageAndDecode(t *testing.T) {
	t.Parallel()
	in := &eventsv1.TaskResult{RunId: "r1", NodeId: "n", Attempt: 2, Output: []byte(`{"a":1}`)}
	m, err := NewMessage(eventsv1.TopicTaskComplete, "r1", in)
	require.NoError(t, err)
	require.Equal(t, eventsv1.TopicTaskComplete, m.Topic)
	require.Equal(t, []byte("r1"), m.Key)
	require.Equal(t, map[string]string{
		eventsv1.HeaderEventType: "braid.events.v1.TaskResult", eventsv1.HeaderSchemaVersion: eventsv1.SchemaVersion,
	}, m.Headers.Map())
	var out eventsv1.TaskResult
	require.NoError(t, Decode(m, &out))
	require.True(t, proto.Equal(in, &out))
}

func TestDecodePoison(t *testing.T) {
	t.Parallel()
	good, err := NewMessage(eventsv1.TopicTaskComplete, "r1", &eventsv1.TaskResult{RunId: "r1"})
	require.NoError(t, err)
	noHeader := good
	noHeader.Headers = nil
	wrongType := good
	wrongType.Headers = Headers{{Key: eventsv1.HeaderEventType, Value: []byte("braid.events.v1.RunEvent")}}
	tests := []struct {
		name    string
		input   Message
		wantErr string
	}{
		{"good", good, ""},
		{"no event-type header", noHeader, ""},
		{"empty value", Message{Topic: "t"}, ""},
		{"wrong event-type", wrongType, `event-type "braid.events.v1.RunEvent", want "braid.events.v1.TaskResult"`},
		{"garbage", Message{Topic: "t", Value: []byte("\xff\xff")}, "decode braid.events.v1.TaskResult topic=t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Decode(tt.input, &eventsv1.TaskResult{})
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrPoison)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestKafkaConversionRoundTrip(t *testing.T) {
	t.Parallel()
	cfg := Config{TopicPrefix: "p."}
	m := Message{Topic: "task.dispatch", Key: []byte("k"), Value: []byte("v"), Headers: Headers{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}}}
	km := cfg.toKafka(m)
	require.Equal(t, "p.task.dispatch", km.Topic)
	require.Len(t, km.Headers, 2)
	km.Partition, km.Offset = 3, 42
	back := cfg.fromKafka(km)
	require.Equal(t, "task.dispatch", back.Topic)
	require.Equal(t, m.Headers, back.Headers)
	require.Equal(t, 3, back.Partition)
	require.Equal(t, int64(42), back.Offset)
	require.Equal(t, km, back.raw)
	require.Nil(t, cfg.toKafka(Message{Topic: "x"}).Headers)
	require.Nil(t, cfg.fromKafka(kafka.Message{Topic: "p.x"}).Headers)
}

// FuzzDecode: Decode never panics, and every failure wraps ErrPoison.
func FuzzDecode(f *testing.F) {
	good, err := NewMessage(eventsv1.TopicTaskDispatch, "r", &eventsv1.TaskDispatch{RunId: "r", NodeId: "n"})
	require.NoError(f, err)
	f.Add(good.Value, "braid.events.v1.TaskDispatch")
	f.Add([]byte("\xff\xff"), "")
	f.Add([]byte{0x0a, 0x05, 'a'}, "braid.events.v1.RunEvent")
	f.Fuzz(func(t *testing.T, value []byte, eventType string) {
		m := Message{Topic: "t", Value: value}
		if eventType != "" {
			m.Headers = Headers{{Key: eventsv1.HeaderEventType, Value: []byte(eventType)}}
		}
		if err := Decode(m, &eventsv1.TaskDispatch{}); err != nil && !errors.Is(err, ErrPoison) {
			t.Fatalf("error does not wrap ErrPoison: %v", err)
		}
	})
}

// TestHeaders: a repeated key reads as its last value and Set replaces it;
// NewMessage's shared values are never changed by a message's Set. (That
// *Headers carries trace context is pkg/tracing's and the e2e tracing
// tests' to show.)
func TestHeaders(t *testing.T) {
	t.Parallel()
	h := Headers{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}, {Key: "a", Value: []byte("3")}}
	require.Equal(t, "3", h.Get("a"))
	v, ok := h.Lookup("b")
	require.True(t, ok)
	require.Equal(t, "2", v)
	_, ok = h.Lookup("c")
	require.False(t, ok)
	require.Equal(t, "", h.Get("c"))
	require.Equal(t, []string{"a", "b"}, h.Keys())
	h.Set("a", "4")
	h.Set("c", "5")
	require.Equal(t, map[string]string{"a": "4", "b": "2", "c": "5"}, h.Map())
	require.Equal(t, "1", string(h[0].Value), "Set changed a value the last one shadows")

	m1, err := NewMessage(eventsv1.TopicTaskComplete, "r", &eventsv1.TaskResult{})
	require.NoError(t, err)
	m2, err := NewMessage(eventsv1.TopicTaskComplete, "r", &eventsv1.TaskResult{})
	require.NoError(t, err)
	m1.Headers.Set(eventsv1.HeaderEventType, "x")
	m1.Headers.Set(eventsv1.HeaderTraceparent, "tp")
	require.Equal(t, "braid.events.v1.TaskResult", m2.Headers.Get(eventsv1.HeaderEventType), "a message's Set reached another's shared value")
	require.Equal(t, "", m2.Headers.Get(eventsv1.HeaderTraceparent))

	c := m2.Headers.Clone()
	c.Set(eventsv1.HeaderSchemaVersion, "9")
	require.Equal(t, eventsv1.SchemaVersion, m2.Headers.Get(eventsv1.HeaderSchemaVersion), "Set on a clone changed the original")
	require.Nil(t, Headers(nil).Clone())
	require.Nil(t, Headers(nil).Map())
}

// TestNewMessageRefusesStringsNotUTF8: the fast encoder does not check
// strings; NewMessage still refuses, as proto.Marshal does, a message
// whose string is not UTF-8 (a consumer would dead-letter it).
func TestNewMessageRefusesStringsNotUTF8(t *testing.T) {
	t.Parallel()
	_, err := NewMessage(eventsv1.TopicTaskComplete, "r", &eventsv1.TaskResult{RunId: "r", Error: "bad \xff"})
	require.ErrorContains(t, err, "invalid UTF-8")
	m, err := NewMessage(eventsv1.TopicTaskDispatch, "r", &eventsv1.TaskDispatch{RunId: "r", NodeId: "n", Attempt: 1,
		SecretSlots: []*eventsv1.SecretSlot{{Path: "p", Parts: []*eventsv1.SecretPart{{Secret: "k"}}}}})
	require.NoError(t, err)
	want, err := proto.MarshalOptions{Deterministic: true}.Marshal(&eventsv1.TaskDispatch{RunId: "r", NodeId: "n", Attempt: 1,
		SecretSlots: []*eventsv1.SecretSlot{{Path: "p", Parts: []*eventsv1.SecretPart{{Secret: "k"}}}}})
	require.NoError(t, err)
	require.Equal(t, want, m.Value, "the fast encoder's bytes are protobuf's")
}
