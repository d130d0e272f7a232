package ownership

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Report is the ownership of one object: the report it prints
// (v1alpha1.OwnershipReport) and what the views walk, which is never data.
type Report struct {
	v1alpha1.OwnershipReport

	// Filtered is set on the copies Filter.Apply returns for a filter
	// that selects something less than everything: views that show the
	// whole object (blame, tree) show only what Fields and Unowned hold.
	Filtered bool `json:"-"`

	// Entries is the number of managedFields entries of the object;
	// Managers holds fewer when a filter left some out.
	Entries int `json:"-"`
	// Owners are the identities of every entry, in managedFields order:
	// Tree's owner indices point here, whatever a filter removed from
	// Managers.
	Owners []v1alpha1.Owner `json:"-"`

	// Tree is the ownership trie the views walk; Content is the object
	// without managedFields, with secret values redacted unless asked for.
	// Content shares the values Analyze did not change with the object
	// analyzed: both are read-only.
	Tree    *Node          `json:"-"`
	Content map[string]any `json:"-"`
}

// Node is a node of the ownership trie: a path element, the indices (into
// Report.Managers) of the managers whose sets hold this exact path, and the
// children that hold owned paths below it.
type Node struct {
	PE       fieldpath.PathElement
	Path     fieldpath.Path
	Owners   []int
	Children []*Node
	// fields indexes children by field name, others by the serialized
	// path element.
	fields map[string]*Node
	others map[string]*Node
}

// EntryChangeKind says what became of a managedFields entry.
type EntryChangeKind string

// The kinds of EntryChange.
const (
	EntryRemoved EntryChangeKind = "removed"
	EntryAdded   EntryChangeKind = "added"
	// EntryChanged: the entry owns other paths.
	EntryChanged EntryChangeKind = "changed"
)

// EntryChange is how one managedFields entry (an identity: manager,
// operation, subresource and apiVersion) changes from one list of entries
// to another: what a view of a managedFields rewrite lists.
type EntryChange struct {
	// Owner is the entry's identity (no Time).
	Owner  v1alpha1.Owner
	Change EntryChangeKind
	// Owned is how many paths a removed entry owned.
	Owned int
	// Lost and Gained are the paths the entry owns no more and those it
	// owns anew (every path of an added entry), in path order.
	Lost, Gained []pathlang.Path
}
