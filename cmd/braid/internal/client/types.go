package client

import "github.com/braidhq/braid/pkg/apiwire"

// The api's documents, declared once in pkg/apiwire for the api and its
// clients; the client returns them as the api wrote them.
type (
	// WorkflowRef names one stored workflow version.
	WorkflowRef = apiwire.WorkflowRef
	// Run is a run as GET /runs/{id} returns it, with its nodes.
	Run = apiwire.Run
	// RunSummary is one run of a RunPage, and the head of a Run.
	RunSummary = apiwire.RunSummary
	// Node is one node of a run.
	Node = apiwire.Node
	// RunPage is one page of GET /runs.
	RunPage = apiwire.RunPage
	// Schedule is a schedule as the api shows it.
	Schedule = apiwire.Schedule
	// SchedulePage is one page of GET /schedules.
	SchedulePage = apiwire.SchedulePage
	// NewSchedule is the body of POST /schedules.
	NewSchedule = apiwire.NewSchedule
	// WorkflowSummary is one workflow of a WorkflowPage.
	WorkflowSummary = apiwire.WorkflowSummary
	// WorkflowPage is one page of GET /workflows.
	WorkflowPage = apiwire.Page[apiwire.WorkflowSummary]
	// WorkflowDoc is one version of a workflow with its definition.
	WorkflowDoc = apiwire.WorkflowDoc
	// WorkerList is the body of GET /workers.
	WorkerList = apiwire.WorkerList
)
