package apiwire

// Page is one page of a list the api answers newest first or in order:
// its items and, when more follow, the cursor that continues after them
// (sent back as ?cursor=).
type Page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}
