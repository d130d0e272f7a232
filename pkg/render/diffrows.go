package render

// diffRows aligns two line lists as difflib's SequenceMatcher (Python's,
// without junk: NewMatcherWithJunk(a, b, false, nil)) does: the longest
// matching block first (the earliest in a, then in b, among equals), then
// the same on each side of it. Each gap between matching blocks is its
// lines of a removed, then its lines of b added.
//
// It is difflib's algorithm with the lines numbered and arrays where
// difflib keeps a map per line of a: the same rows, for a fraction of the
// work (TestDiffRowsAsDifflib).
func diffRows(a, b []string) []diffRow {
	m := newLineMatcher(a, b)
	var rows []diffRow
	i, j := 0, 0
	for _, blk := range m.blocks() {
		for ; i < blk.a; i++ {
			rows = append(rows, diffRow{op: '-', a: i, b: -1})
		}
		for ; j < blk.b; j++ {
			rows = append(rows, diffRow{op: '+', a: -1, b: j})
		}
		for k := 0; k < blk.size; k++ {
			rows = append(rows, diffRow{op: ' ', a: blk.a + k, b: blk.b + k})
		}
		i, j = blk.a+blk.size, blk.b+blk.size
	}
	return rows
}

// block is a run of size lines, a[a:a+size] == b[b:b+size].
type block struct{ a, b, size int }

type lineMatcher struct {
	a, b []int   // the lines, as numbers equal for equal lines
	b2j  [][]int // by line number: where it is in b, ascending
	// runs[g%2] holds, for the row of generation g, the length of the
	// match ending at each j (index j+1), valid where gens says g: one
	// generation per line of a visited (from 1), so that no row is ever
	// cleared.
	runs [2][]int
	gens [2][]int
	gen  int
}

func newLineMatcher(a, b []string) *lineMatcher {
	ids := make(map[string]int, len(b))
	m := &lineMatcher{b: make([]int, len(b)), a: make([]int, len(a))}
	for j, s := range b {
		id, ok := ids[s]
		if !ok {
			id = len(ids)
			ids[s] = id
			m.b2j = append(m.b2j, nil)
		}
		m.b[j] = id
		m.b2j[id] = append(m.b2j[id], j)
	}
	for i, s := range a {
		id, ok := ids[s]
		if !ok {
			id = -1 // in a only: matches nothing
		}
		m.a[i] = id
	}
	for k := range m.runs {
		m.runs[k], m.gens[k] = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	return m
}

// longest is difflib's find_longest_match in a[alo:ahi], b[blo:bhi]:
// the longest matching block, the earliest in a, then in b.
func (m *lineMatcher) longest(alo, ahi, blo, bhi int) block {
	best := block{a: alo, b: blo}
	prev := -1 // the generation of the row before: none yet
	for i := alo; i < ahi; i++ {
		m.gen++
		g := m.gen
		run, gens := m.runs[g%2], m.gens[g%2]
		if id := m.a[i]; id >= 0 {
			prun, pgens := m.runs[(g+1)%2], m.gens[(g+1)%2]
			for _, j := range m.b2j[id] {
				if j < blo {
					continue
				}
				if j >= bhi {
					break
				}
				k := 1
				if pgens[j] == prev { // the match ending at j-1 (index j)
					k = prun[j] + 1
				}
				run[j+1], gens[j+1] = k, g
				if k > best.size {
					best = block{a: i - k + 1, b: j - k + 1, size: k}
				}
			}
		}
		prev = g
	}
	return best
}

// blocks are difflib's get_matching_blocks, adjacent blocks joined,
// ending with the empty block at the ends of a and b.
func (m *lineMatcher) blocks() []block {
	var matched []block
	var match func(alo, ahi, blo, bhi int)
	match = func(alo, ahi, blo, bhi int) {
		x := m.longest(alo, ahi, blo, bhi)
		if x.size == 0 {
			return
		}
		if alo < x.a && blo < x.b {
			match(alo, x.a, blo, x.b)
		}
		matched = append(matched, x)
		if x.a+x.size < ahi && x.b+x.size < bhi {
			match(x.a+x.size, ahi, x.b+x.size, bhi)
		}
	}
	match(0, len(m.a), 0, len(m.b))
	var out []block
	cur := block{}
	for _, x := range matched {
		if cur.a+cur.size == x.a && cur.b+cur.size == x.b {
			cur.size += x.size
			continue
		}
		if cur.size > 0 {
			out = append(out, cur)
		}
		cur = x
	}
	if cur.size > 0 {
		out = append(out, cur)
	}
	return append(out, block{a: len(m.a), b: len(m.b)})
}
