package eventsv1

import "unicode/utf8"

// Conforms methods report whether a message (nested ones included) has
// every string field UTF-8 and no unknown field. The generated MarshalVT
// (events_vtproto.pb.go) is protobuf's encoding, about 3× faster than
// proto.Marshal here, but does not check what proto.Marshal checks: that
// proto3 strings are UTF-8. For a message that conforms it writes exactly
// the bytes proto.Marshal (deterministic) writes (FuzzVTMatchesProto), and
// pkg/eventbus uses proto.Marshal — and its error — for one that does not.
// TestConformsCoversEveryString fails when a string field is added to
// events.proto and not here.

// allConform reports whether every message of ms conforms.
func allConform[M interface{ Conforms() bool }](ms []M) bool {
	for _, m := range ms {
		if !m.Conforms() {
			return false
		}
	}
	return true
}

func utf8All(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// Conforms reports whether m's strings are UTF-8 and it has no unknown field.
func (m *RunStartRequested) Conforms() bool {
	return len(m.unknownFields) == 0 && utf8All(m.GetRunId(), m.GetWorkflow(), m.GetRequestedBy(), m.GetScheduleId())
}

// Conforms reports whether m's strings are UTF-8 and it has no unknown field.
func (m *RunControl) Conforms() bool {
	return len(m.unknownFields) == 0 && utf8All(m.GetRunId(), m.GetNodeId(), m.GetReason(), m.GetRequestId(), m.GetRequestedBy())
}

// Conforms reports whether m and its secret slots conform.
func (m *TaskDispatch) Conforms() bool {
	return len(m.unknownFields) == 0 && utf8All(m.GetRunId(), m.GetWorkflow(), m.GetNodeId(), m.GetHandler(), m.GetIdempotencyKey()) &&
		allConform(m.GetSecretSlots())
}

// Conforms reports whether m and its parts conform.
func (m *SecretSlot) Conforms() bool {
	return len(m.unknownFields) == 0 && utf8.ValidString(m.GetPath()) && allConform(m.GetParts())
}

// Conforms reports whether m's strings are UTF-8 and it has no unknown field.
func (m *SecretPart) Conforms() bool {
	return len(m.unknownFields) == 0 && utf8All(m.GetText(), m.GetSecret())
}

// Conforms reports whether m's strings are UTF-8 and it has no unknown field.
func (m *TaskResult) Conforms() bool {
	return len(m.unknownFields) == 0 && utf8All(m.GetRunId(), m.GetNodeId(), m.GetOutputRef(), m.GetError(), m.GetWorkerId())
}

// Conforms reports whether m's strings are UTF-8 and it has no unknown field.
func (m *NodeChange) Conforms() bool {
	return len(m.unknownFields) == 0 && utf8All(m.GetNodeId(), m.GetDetail(), m.GetWorkerId())
}

// Conforms reports whether m and its node changes conform.
func (m *RunEvent) Conforms() bool {
	return len(m.unknownFields) == 0 && utf8All(m.GetRunId(), m.GetWorkflow(), m.GetDetail()) && allConform(m.GetNodes())
}
