package eventsv1

// Topic names. Every record on these topics is keyed by run id.
const (
	// TopicWorkflowStart carries RunStartRequested from the api and the scheduler to the orchestrator.
	TopicWorkflowStart = "workflow.start"
	// TopicWorkflowControl carries RunControl from the api to the orchestrator.
	TopicWorkflowControl = "workflow.control"
	// TopicTaskDispatch carries TaskDispatch from the orchestrator to workers.
	TopicTaskDispatch = "task.dispatch"
	// TopicTaskComplete carries TaskResult from workers to the orchestrator.
	TopicTaskComplete = "task.complete"
	// TopicWorkflowEvents carries RunEvent from the orchestrator to the api (SSE) and auditors.
	TopicWorkflowEvents = "workflow.events"
	// DLQSuffix is appended to a topic name to form its dead-letter topic.
	DLQSuffix = ".dlq"
)

// Header names carried by every record.
const (
	// HeaderEventType names the protobuf message in the value, e.g. "braid.events.v1.TaskResult".
	HeaderEventType = "event-type"
	// HeaderSchemaVersion is the schema version of the value; SchemaVersion today.
	HeaderSchemaVersion = "schema-version"
	// HeaderTraceparent is the W3C trace context of the producing span.
	HeaderTraceparent = "traceparent"
	// HeaderDLQReason explains why a record was dead-lettered.
	HeaderDLQReason = "dlq-reason"
	// HeaderDLQTopic, HeaderDLQPartition and HeaderDLQOffset locate the original record.
	HeaderDLQTopic     = "dlq-source-topic"
	HeaderDLQPartition = "dlq-source-partition"
	HeaderDLQOffset    = "dlq-source-offset"
)

// SchemaVersion is the value of HeaderSchemaVersion this package produces.
const SchemaVersion = "1"

// Topics lists every primary topic, in flow order.
var Topics = []string{TopicWorkflowStart, TopicWorkflowControl, TopicTaskDispatch, TopicTaskComplete, TopicWorkflowEvents}

// DLQ returns the dead-letter topic of topic.
func DLQ(topic string) string { return topic + DLQSuffix }
