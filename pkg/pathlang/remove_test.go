package pathlang_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

func TestRemove(t *testing.T) {
	const doc = `{"metadata":{"labels":{"a":"1"},"finalizers":["x","y"]},"spec":{"replicas":3,"args":["p","q"],` +
		`"containers":[{"name":"app","image":"i","ports":[{"containerPort":80,"protocol":"TCP"}]},{"name":"side","image":"s"}]}}`
	tests := []struct {
		name, path  string
		want        string
		wantRemoved bool
		wantErr     bool
	}{
		{name: "a field", path: ".spec.replicas", wantRemoved: true,
			want: `{"metadata":{"finalizers":["x","y"],"labels":{"a":"1"}},"spec":{"args":["p","q"],"containers":[{"image":"i","name":"app","ports":[{"containerPort":80,"protocol":"TCP"}]},{"image":"s","name":"side"}]}}`},
		{name: "the last label: the map goes too", path: ".metadata.labels.a", wantRemoved: true,
			want: `{"metadata":{"finalizers":["x","y"]},"spec":{"args":["p","q"],"containers":[{"image":"i","name":"app","ports":[{"containerPort":80,"protocol":"TCP"}]},{"image":"s","name":"side"}],"replicas":3}}`},
		{name: "in a list item by key", path: `.spec.containers[name="side"].image`, wantRemoved: true,
			want: `{"metadata":{"finalizers":["x","y"],"labels":{"a":"1"}},"spec":{"args":["p","q"],"containers":[{"image":"i","name":"app","ports":[{"containerPort":80,"protocol":"TCP"}]},{"name":"side"}],"replicas":3}}`},
		{name: "a whole item", path: `.spec.containers[name="app"]`, wantRemoved: true,
			want: `{"metadata":{"finalizers":["x","y"],"labels":{"a":"1"}},"spec":{"args":["p","q"],"containers":[{"image":"s","name":"side"}],"replicas":3}}`},
		{name: "the only item: the list goes too", path: `.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]`, wantRemoved: true,
			want: `{"metadata":{"finalizers":["x","y"],"labels":{"a":"1"}},"spec":{"args":["p","q"],"containers":[{"image":"i","name":"app"},{"image":"s","name":"side"}],"replicas":3}}`},
		{name: "a set member", path: `.metadata.finalizers[="x"]`, wantRemoved: true,
			want: `{"metadata":{"finalizers":["y"],"labels":{"a":"1"}},"spec":{"args":["p","q"],"containers":[{"image":"i","name":"app","ports":[{"containerPort":80,"protocol":"TCP"}]},{"image":"s","name":"side"}],"replicas":3}}`},
		{name: "not there", path: ".spec.paused",
			want: `{"metadata":{"finalizers":["x","y"],"labels":{"a":"1"}},"spec":{"args":["p","q"],"containers":[{"image":"i","name":"app","ports":[{"containerPort":80,"protocol":"TCP"}]},{"image":"s","name":"side"}],"replicas":3}}`},
		{name: "a position", path: ".spec.args[1]", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj map[string]any
			if err := json.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatal(err)
			}
			p, err := pathlang.ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			removed, err := pathlang.Remove(obj, p)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("no error")
				}
				return
			}
			if err != nil || removed != tt.wantRemoved {
				t.Fatalf("removed %v, err %v", removed, err)
			}
			got, _ := json.Marshal(obj)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
