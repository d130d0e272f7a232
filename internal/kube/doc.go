// Package kube is kubectl-ssa's one way to a cluster: the clients of a run
// (made from kubectl's flags, a genericclioptions.RESTClientGetter), the
// selection of objects for every command (TYPE[/NAME], -f, -R, -k, -l, -A,
// --all-kinds through discovery; whole objects for reading, chunked
// metadata-only lists for bulk work), served-kind and subresource checks,
// errors rewritten into one line that says what to do, and the watch that
// rides out a lost server. The one write kubectl-ssa makes besides a
// server-side apply is pkg/write's.
//
// It knows nothing of Server-Side Apply semantics: those are proven
// against a real apiserver in test/e2e; the tests here cover plumbing.
package kube
