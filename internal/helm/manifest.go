package helm

import (
	"fmt"
	"strings"
)

// MaxObjects bounds the objects of a release's manifest that kubectl-ssa
// reads. The largest charts in common use render a few hundred objects;
// 3,000 is ten times that, and keeps what a crafted manifest costs (16
// MiB of tiny objects would be 300,000) within what bench/helm-storage.sh
// holds diff --helm-release to: 300 MiB and 20 s (10,000 objects took
// 450 MiB and 51 s there).
const MaxObjects = 3000

// CheckDocuments refuses a manifest of more than MaxObjects documents
// before it is parsed: counting is cheap, parsing 300,000 objects is not.
// A line that starts with "---" always separates documents in YAML (no
// scalar can hold one at the start of a line), so the count is exact, and
// empty documents count too: Helm writes none.
func CheckDocuments(manifest string) error {
	n := 0
	for rest := manifest; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if isSeparator(line) {
			n++
		}
	}
	if n > MaxObjects {
		return fmt.Errorf("its manifest has %d documents, more than the %d objects kubectl-ssa reads of a release (charts render a few hundred)", n, MaxObjects)
	}
	return nil
}

// isSeparator tells whether line starts a YAML document: "---" alone or
// followed by a blank.
func isSeparator(line string) bool {
	if !strings.HasPrefix(line, "---") {
		return false
	}
	rest := strings.TrimSuffix(line[3:], "\r")
	return rest == "" || rest[0] == ' ' || rest[0] == '\t'
}
