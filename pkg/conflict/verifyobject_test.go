package conflict

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

func yamlObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// The whole-object comparison of --verify: bookkeeping aside, unknown
// paths aside (also inside an atomic value), a Secret's values unsaid.
func TestObjectDifferences(t *testing.T) {
	tc := BuiltinSchema()
	server := yamlObject(t, `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns, uid: u1, resourceVersion: "7", generation: 1, labels: {team: a}}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u1}}
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
`)
	predicted := yamlObject(t, `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  selector: {matchLabels: {}}
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
`)
	uid := fieldpath.MakePathOrDie("spec", "selector", "matchLabels", "batch.kubernetes.io/controller-uid")
	got, err := objectDifferences(tc, server, predicted, []fieldpath.Path{uid})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], ".metadata.labels.team: set by the server, not predicted") {
		t.Errorf("with the unknown uid: %q", got)
	}
	got, _ = objectDifferences(tc, server, predicted, nil)
	if len(got) != 2 || !strings.HasPrefix(got[1], ".spec.selector: the server's value differs") {
		t.Errorf("without it: %q", got)
	}

	secret := yamlObject(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {password: U0VDUkVU}\n")
	got, _ = objectDifferences(tc, secret, yamlObject(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {password: T1RIRVI=}\n"), nil)
	if len(got) != 1 || strings.Contains(got[0], "U0VDUkVU") || strings.Contains(got[0], "T1RIRVI") {
		t.Errorf("a Secret: %q", got)
	}
}
