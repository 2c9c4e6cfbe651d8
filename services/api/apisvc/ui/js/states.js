// states.js: what run and node states mean to the page, in one place, so
// that the graph, the header and the node panel agree.

// ended reports whether a run status is final (cancelling is not).
export function ended(status) {
  return status === "succeeded" || status === "failed" || status === "cancelled";
}

// awaitsApproval reports whether node n is an approval node waiting for a
// decision: the api takes approve or reject for it then, and only then.
export function awaitsApproval(n) {
  return n.handler === "approval" && n.state === "queued";
}

// builtin reports whether node n is one the orchestrator runs itself (a
// wait or approval node): no worker, no handler code, no idempotency key.
export function builtin(n) {
  return n.handler === "wait" || n.handler === "approval";
}
