package ownership_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

func TestFilterApply(t *testing.T) {
	const (
		platform = "platform Apply example.com/v1"
		team     = "team Apply example.com/v1"
		old      = "old-client Update example.com/v1beta1"
		ctrl     = "widget-controller Update /status example.com/v1"
		idle     = "idle Apply example.com/v1"
		bare     = "bare Update example.com/v1"
	)
	allUnowned := []string{
		".metadata.annotations",
		`.metadata.finalizers[="example.com/other"]`,
		`.spec.containers[name="web"].ports[containerPort=8080,protocol="UDP"]`,
		".spec.replicas",
		".spec.steps[0].retries",
		".status.observedGeneration",
	}
	type want struct {
		Managers []string
		Fields   []string
		Unowned  []string
	}
	tests := []struct {
		name   string
		filter ownership.Filter
		want   want
	}{
		{
			name:   "zero filter keeps everything",
			filter: ownership.Filter{},
			want: want{
				Managers: []string{platform, team, old, ctrl, idle, bare},
				Fields: []string{
					`.metadata.finalizers[="example.com/keep"]`,
					".metadata.labels.app.kubernetes.io/name",
					".metadata.labels.tier",
					`.spec.containers[name="web"]`,
					`.spec.containers[name="web"].image`,
					`.spec.containers[name="web"].name`,
					`.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]`,
					`.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].containerPort`,
					`.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].protocol`,
					".spec.selector",
					".spec.steps[0].run",
					".spec.steps[1].run",
					".status.phase",
				},
				Unowned: allUnowned,
			},
		},
		{
			name:   "manager glob keeps shared fields with all their owners, drops unowned",
			filter: ownership.Filter{Managers: []string{"te*"}},
			want: want{
				Managers: []string{team},
				Fields:   []string{`.spec.containers[name="web"]`, `.spec.containers[name="web"].image`, `.spec.containers[name="web"].name`},
				Unowned:  []string{},
			},
		},
		{
			name:   "several manager globs",
			filter: ownership.Filter{Managers: []string{"old-*", "widget-controller"}},
			want: want{
				Managers: []string{old, ctrl},
				Fields:   []string{".metadata.labels.tier", ".status.phase"},
				Unowned:  []string{},
			},
		},
		{
			name:   "operation is case-insensitive",
			filter: ownership.Filter{Operation: "update"},
			want: want{
				Managers: []string{old, ctrl, bare},
				Fields:   []string{".metadata.labels.tier", ".status.phase"},
				Unowned:  []string{},
			},
		},
		{
			name:   "subresource",
			filter: ownership.Filter{Subresource: "status"},
			want:   want{Managers: []string{ctrl}, Fields: []string{".status.phase"}, Unowned: []string{}},
		},
		{
			name:   "subresource none is the main resource",
			filter: ownership.Filter{Subresource: "none", Operation: "Update"},
			want:   want{Managers: []string{old, bare}, Fields: []string{".metadata.labels.tier"}, Unowned: []string{}},
		},
		{
			name:   "subresource - is the main resource",
			filter: ownership.Filter{Subresource: "-", Managers: []string{"widget-*"}},
			want:   want{Managers: []string{}, Fields: []string{}, Unowned: []string{}},
		},
		{
			name:   "shared: the managers of the shared fields",
			filter: ownership.Filter{Shared: true},
			want: want{
				Managers: []string{platform, team},
				Fields:   []string{`.spec.containers[name="web"]`, `.spec.containers[name="web"].image`, `.spec.containers[name="web"].name`},
				Unowned:  []string{},
			},
		},
		{
			name:   "field glob selects owned and unowned paths, and the managers of those",
			filter: ownership.Filter{Fields: []string{".spec.steps.**"}},
			want: want{
				Managers: []string{platform},
				Fields:   []string{".spec.steps[0].run", ".spec.steps[1].run"},
				Unowned:  []string{".spec.steps[0].retries"},
			},
		},
		{
			name:   "several field globs, display and apiserver forms",
			filter: ownership.Filter{Fields: []string{`.metadata.labels["app.kubernetes.io/name"]`, ".metadata.labels.tier", `.spec.containers[name="web"].ports[*]`}},
			want: want{
				Managers: []string{platform, old},
				Fields: []string{
					".metadata.labels.app.kubernetes.io/name",
					".metadata.labels.tier",
					`.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]`,
				},
				Unowned: []string{`.spec.containers[name="web"].ports[containerPort=8080,protocol="UDP"]`},
			},
		},
		{
			name:   "unowned only: nobody owns them",
			filter: ownership.Filter{Unowned: true},
			want:   want{Managers: []string{}, Fields: []string{}, Unowned: allUnowned},
		},
		{
			name:   "unowned below a top-most unowned path",
			filter: ownership.Filter{Unowned: true, Fields: []string{".metadata.annotations.*"}},
			want: want{
				Managers: []string{},
				Fields:   []string{},
				Unowned:  []string{".metadata.annotations.example.com/path"},
			},
		},
		{
			name:   "manager and field together",
			filter: ownership.Filter{Managers: []string{"platform"}, Fields: []string{".spec.containers[*].*"}},
			want: want{
				Managers: []string{platform},
				Fields:   []string{`.spec.containers[name="web"].image`, `.spec.containers[name="web"].name`},
				Unowned:  []string{},
			},
		},
		{
			name:   "nothing matches",
			filter: ownership.Filter{Managers: []string{"nobody"}},
			want:   want{Managers: []string{}, Fields: []string{}, Unowned: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ownership.Analyze(object(t, widget), ownership.Options{})
			if err != nil {
				t.Fatal(err)
			}
			before := view(r)
			out := tt.filter.Apply(r)
			got := want{Managers: []string{}, Fields: []string{}, Unowned: apiStrings(out.Unowned)}
			for _, m := range out.Managers {
				got.Managers = append(got.Managers, ownerText(m.Owner))
			}
			for _, f := range out.Fields {
				got.Fields = append(got.Fields, f.Path.APIServerString())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
			if out.Entries != 6 {
				t.Errorf("Entries = %d after filtering, want the object's 6", out.Entries)
			}
			if diff := cmp.Diff(before, view(r), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Apply changed its input (-before +after):\n%s", diff)
			}
		})
	}
}
