package pathlang

import (
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// A path can also be written as a list of segments, as admission's ops
// are (v1alpha1.AdmissionOp's Path): each segment a field name, or
// [key="value"] (ItemSegment), which selects the item of a keyed list
// whose key field has that value.

// ItemSegment is the segment that selects the item of a keyed list whose
// key is value, written as the apiserver writes it: [name="c"].
func ItemSegment(key, value string) string {
	return ElementString(fieldpath.PathElement{Key: fieldpath.KeyByFields(key, value)})
}

// SplitItemSegment reads a segment written by ItemSegment.
func SplitItemSegment(seg string) (key, value string, ok bool) {
	if !strings.HasPrefix(seg, "[") || !strings.HasSuffix(seg, "]") {
		return "", "", false
	}
	key, quoted, found := strings.Cut(seg[1:len(seg)-1], "=")
	if !found {
		return "", "", false
	}
	value, err := strconv.Unquote(quoted)
	return key, value, err == nil
}

// FromSegments is the path a list of segments names
// (.spec.containers[name="c"].resources).
func FromSegments(segs []string) Path {
	var p fieldpath.Path
	for _, seg := range segs {
		if key, value, ok := SplitItemSegment(seg); ok {
			p = append(p, fieldpath.PathElement{Key: fieldpath.KeyByFields(key, value)})
			continue
		}
		name := seg
		p = append(p, fieldpath.PathElement{FieldName: &name})
	}
	return Path(p)
}
