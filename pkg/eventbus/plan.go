package eventbus

// request is the chunks of one produce request: whole partitions, or one
// chunk of a partition too big for one request, all led by one broker.
type request struct {
	leader int
	chunks []*chunk
	bytes  int
}

// sequence is requests sent one after another, each once the previous one
// is acknowledged: the chunks of one partition too big for one request, in
// order. Different sequences hold different partitions and may be sent in
// parallel.
type sequence []*request

// plan groups parts into as few produce requests as the leaders and
// maxRequestBytes allow: the partitions of one leader share a request
// while their records fit (a partition is never split across requests
// when it fits in one), and a partition bigger than one request gets a
// sequence of its own, so its chunks land in order. Pure: it only arranges
// what route built.
func plan(parts []*partition) []sequence {
	var out []sequence
	open := map[int]*request{} // the request of each leader still being filled
	for _, p := range parts {
		if len(p.chunks) > 1 {
			seq := make(sequence, len(p.chunks))
			for i, c := range p.chunks {
				seq[i] = &request{leader: p.leader, chunks: []*chunk{c}, bytes: c.bytes}
			}
			out = append(out, seq)
			continue
		}
		c := p.chunks[0]
		r := open[p.leader]
		if r == nil || r.bytes+c.bytes > maxRequestBytes {
			r = &request{leader: p.leader}
			open[p.leader] = r
			out = append(out, sequence{r})
		}
		r.chunks = append(r.chunks, c)
		r.bytes += c.bytes
	}
	return out
}

// topics returns the topics of r, each once, in order of first chunk.
func (r *request) topics() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range r.chunks {
		if !seen[c.part.topic] {
			seen[c.part.topic] = true
			out = append(out, c.part.topic)
		}
	}
	return out
}
