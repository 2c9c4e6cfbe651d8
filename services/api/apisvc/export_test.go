package apisvc

// FeedState reports, for tests of the package's users, whether s's
// workflow.events feed is open, how many streams use it and how many tails
// it opened so far.
func FeedState(s *Server) (open bool, users, opened int) { return s.feed.state() }
