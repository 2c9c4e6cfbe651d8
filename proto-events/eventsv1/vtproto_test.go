package eventsv1

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// vt is what the generated fast methods and utf8.go give every message.
type vt interface {
	proto.Message
	MarshalVT() ([]byte, error)
	Conforms() bool
}

// messages lists a new, empty message of every type in events.proto.
func messages(t testing.TB) []vt {
	var out []vt
	msgs := File_braid_events_v1_events_proto.Messages()
	for i := range msgs.Len() {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(msgs.Get(i).FullName())
		if err != nil {
			t.Fatal(err)
		}
		m, ok := mt.New().Interface().(vt)
		if !ok {
			t.Fatalf("%s has no MarshalVT or Conforms: run make proto, and add it to utf8.go", msgs.Get(i).FullName())
		}
		out = append(out, m)
	}
	return out
}

// stringPaths sets, one at a time, every string field of m's type — those
// of the messages it holds included, one element deep — to value, calling
// visit with the message so changed and the field's name.
func stringPaths(m protoreflect.Message, value string, name string, visit func(string)) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		path := name + "." + string(f.Name())
		switch {
		case f.Kind() == protoreflect.StringKind && !f.IsList() && !f.IsMap():
			m.Set(f, protoreflect.ValueOfString(value))
			visit(path)
			m.Clear(f)
		case f.Kind() == protoreflect.MessageKind && f.IsList():
			list := m.Mutable(f).List()
			child := list.NewElement()
			list.Append(child)
			stringPaths(child.Message(), value, path+"[0]", visit)
			m.Clear(f)
		case f.Kind() == protoreflect.MessageKind && !f.IsMap():
			child := m.Mutable(f).Message()
			stringPaths(child, value, path, visit)
			m.Clear(f)
		case f.Kind() == protoreflect.StringKind || f.IsMap():
			panic("Conforms does not cover repeated strings or maps: extend utf8.go and this test")
		}
	}
}

// TestConformsCoversEveryString: every string field, nested ones
// included, that protobuf would refuse is caught by Conforms, and a UTF-8
// value passes; so are unknown fields.
func TestConformsCoversEveryString(t *testing.T) {
	for _, m := range messages(t) {
		name := string(m.ProtoReflect().Descriptor().Name())
		n := 0
		stringPaths(m.ProtoReflect(), "\xff", name, func(path string) {
			n++
			if m.Conforms() {
				t.Errorf("%s = \"\\xff\": Conforms says yes", path)
			}
			if _, err := proto.Marshal(m); err == nil {
				t.Errorf("%s = \"\\xff\": proto.Marshal took it", path)
			}
		})
		stringPaths(m.ProtoReflect(), "é ok", name, func(path string) {
			if !m.Conforms() {
				t.Errorf("%s = \"é ok\": Conforms says no", path)
			}
		})
		if n == 0 {
			t.Logf("%s has no string field", name)
		}
		m.ProtoReflect().SetUnknown(protoreflect.RawFields("\xf8\x07\x01")) // field 127, varint 1
		if m.Conforms() {
			t.Errorf("%s with an unknown field: Conforms says yes", name)
		}
		m.ProtoReflect().SetUnknown(nil)
		if !m.Conforms() {
			t.Errorf("empty %s: Conforms says no", name)
		}
	}
}

// FuzzVTMatchesProto: whatever proto.Unmarshal reads, MarshalVT encodes to
// the bytes proto.Marshal (deterministic) gives when it conforms, and
// proto.Marshal refuses it (a string not UTF-8) only when it does not.
// pkg/eventbus relies on both.
func FuzzVTMatchesProto(f *testing.F) {
	seeds := []proto.Message{
		&TaskDispatch{RunId: "r", NodeId: "n", Attempt: 2, Handler: "shell", Config: []byte(`{"a":1}`),
			SecretSlots: []*SecretSlot{{Path: "x", Parts: []*SecretPart{{Text: "t"}, {Secret: "s"}}}}},
		&TaskResult{RunId: "r", NodeId: "n", Attempt: 1, Status: TaskStatus_TASK_STATUS_FAILED, Error: "é", WorkerId: "w", FinishedAtMs: 1764444444444},
		&RunEvent{RunId: "r", Nodes: []*NodeChange{{NodeId: "a", Detail: "d"}}},
		&RunControl{RunId: "r", Action: ControlAction_CONTROL_ACTION_APPROVE, NodeId: "gate", Reason: "ok"},
		&RunStartRequested{RunId: "r", Workflow: "wf", Input: []byte(`{}`)},
	}
	for i, s := range seeds {
		b, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i))
	}
	f.Add([]byte("\x0a\x01\xff"), uint8(0))
	f.Add([]byte("\x08\x96\x01"), uint8(1))
	types := messages(f)
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		mt := types[int(which)%len(types)]
		p := mt.ProtoReflect().New().Interface()
		// (proto.Unmarshal refuses strings that are not UTF-8: those are
		// TestConformsCoversEveryString's.)
		if err := proto.Unmarshal(data, p); err != nil {
			return
		}
		want, errP := proto.MarshalOptions{Deterministic: true}.Marshal(p)
		conforms := p.(vt).Conforms()
		if conforms && errP != nil {
			t.Fatalf("conforms, yet proto.Marshal refused it: %v", errP)
		}
		if !conforms {
			return
		}
		got, err := p.(vt).MarshalVT()
		if err != nil {
			t.Fatalf("MarshalVT: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("MarshalVT gave %x, proto.Marshal %x", got, want)
		}
	})
}
