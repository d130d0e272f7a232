package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

// head is a request's protocol fields and object; each case adds to it.
const head = `"kind":"PolicyEvaluationRequest","apiVersion":"ssa.kubectl-ssa.io/v1alpha1","operation":"CREATE",` +
	`"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"team"}},` +
	`"resource":{"group":"","version":"v1","resource":"configmaps"},"namespaced":true,"fieldManager":"kubectl"`

const vap = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"p"},` +
	`"spec":{"failurePolicy":"Fail","matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},` +
	`"validations":[{"expression":"object.metadata.name != 'web'"}]}}`

const vapb = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"b"},` +
	`"spec":{"policyName":"p","validationActions":["Deny"]}}`

const mutatingPolicy = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy","metadata":{"name":"m"},` +
	`"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},` +
	`"mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'add', path: '/data', value: {'a': 'b'}}]"}}]}}`

const mapb = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicyBinding","metadata":{"name":"mb"},"spec":{"policyName":"m"}}`

// oddRequests are requests kubectl-ssa never writes: each must be an
// error (or an answer), never a panic.
var oddRequests = []struct{ name, in string }{
	{"empty", ``},
	{"null", `null`},
	{"a list", `[]`},
	{"a string", `"x"`},
	{"no object", `{` + strings.Replace(head, `"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"team"}},`, "", 1) + `}`},
	{"null object", `{` + strings.Replace(head, `"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"team"}}`, `"object":null`, 1) + `}`},
	{"object without kind", `{` + strings.Replace(head, `"kind":"ConfigMap",`, "", 1) + `}`},
	{"object of a string", `{` + strings.Replace(head, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"team"}}`, `"x"`, 1) + `}`},
	{"null policy", `{` + head + `,"validatingPolicies":[null],"validatingBindings":[` + vapb + `]}`},
	{"null binding", `{` + head + `,"validatingPolicies":[` + vap + `],"validatingBindings":[null]}`},
	{"null mutating policy", `{` + head + `,"mutatingPolicies":[null],"mutatingBindings":[` + mapb + `]}`},
	{"null mutating binding", `{` + head + `,"mutatingPolicies":[` + mutatingPolicy + `],"mutatingBindings":[null]}`},
	{"policy without a binding", `{` + head + `,"validatingPolicies":[` + vap + `]}`},
	{"binding without a policy", `{` + head + `,"validatingBindings":[` + vapb + `]}`},
	{"binding without policyName", `{` + head + `,"validatingPolicies":[` + vap + `],"validatingBindings":[` + strings.Replace(vapb, `"policyName":"p",`, "", 1) + `]}`},
	{"policy without a name", `{` + head + `,"validatingPolicies":[` + strings.Replace(vap, `"metadata":{"name":"p"},`, "", 1) + `],"validatingBindings":[` + vapb + `]}`},
	{"policy in the binding slot", `{` + head + `,"validatingPolicies":[` + vap + `],"validatingBindings":[` + vap + `]}`},
	{"policy with a string spec", `{` + head + `,"validatingPolicies":[` + strings.Replace(vap, `"spec":{`, `"spec":"x","x":{`, 1) + `],"validatingBindings":[` + vapb + `]}`},
	{"validations of a string", `{` + head + `,"validatingPolicies":[` + strings.Replace(vap, `"validations":[{"expression":"object.metadata.name != 'web'"}]`, `"validations":"x"`, 1) + `],"validatingBindings":[` + vapb + `]}`},
	{"null validation", `{` + head + `,"validatingPolicies":[` + strings.Replace(vap, `"validations":[{"expression":"object.metadata.name != 'web'"}]`, `"validations":[null]`, 1) + `],"validatingBindings":[` + vapb + `]}`},
	{"mutating without schema", `{` + head + `,"mutatingPolicies":[` + mutatingPolicy + `],"mutatingBindings":[` + mapb + `]}`},
	{"mutating with a bad schema", `{` + head + `,"schema":"AAAA","typeName":"x","mutatingPolicies":[` + mutatingPolicy + `],"mutatingBindings":[` + mapb + `]}`},
	{"null params", `{` + head + `,"params":null}`},
	{"params with a null item", `{` + head + `,"params":[{"apiVersion":"v1","kind":"ConfigMap","items":[null]}]}`},
	{"params without a kind", `{` + head + `,"params":[{"apiVersion":"v1","items":[]}]}`},
	{"params of a bad apiVersion", `{` + head + `,"params":[{"apiVersion":"a/b/c","kind":"X","items":[]}]}`},
	{"null webhook", `{` + head + `,"webhooks":[{"kind":"ValidatingWebhook","configuration":"c","webhook":null}]}`},
	{"webhook of no kind", `{` + head + `,"webhooks":[{"configuration":"c","webhook":{"name":"w"}}]}`},
	{"webhook with null condition", `{` + head + `,"webhooks":[{"kind":"MutatingWebhook","configuration":"c","webhook":{"name":"w","matchConditions":[null]}}]}`},
	{"null namespace", `{` + head + `,"namespace":null}`},
	{"namespace of a pod", `{` + head + `,"namespace":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"team"},"spec":"x"}}`},
	{"null user", `{` + head + `,"userInfo":null}`},
	{"null old object", `{` + head + `,"oldObject":null}`},
	{"old object of another kind", `{` + head + `,"oldObject":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"web"}}}`},
	{"huge server minor", `{` + head + `,"serverMinor":99999,"validatingPolicies":[` + vap + `],"validatingBindings":[` + vapb + `]}`},
	{"negative server minor", `{` + head + `,"serverMinor":-3,"validatingPolicies":[` + vap + `],"validatingBindings":[` + vapb + `]}`},
	{"wrong kind", `{"kind":"Other","apiVersion":"v1"}`},
}

// TestOddRequestsNeverPanic: every odd request ends in an error line or
// an answer; evaluate's recover is not what saves it (run is called
// directly).
func TestOddRequestsNeverPanic(t *testing.T) {
	for _, c := range oddRequests {
		in := c.in
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic on %s: %v\n%s", in, r, debug.Stack())
				}
			}()
			_ = run(context.Background(), nil, strings.NewReader(in), &out)
		})
	}
}

func TestNullPolicyIsAnError(t *testing.T) {
	for _, c := range oddRequests {
		switch c.name {
		case "null old object", "null user", "null namespace", "null params", "null validation":
			// Each means something: none, not known, or (a validation)
			// one that fails to compile, as the server fails it.
			continue
		}
		if !strings.HasPrefix(c.name, "null ") && c.name != "binding without policyName" {
			continue
		}
		name := c.name
		err := run(context.Background(), nil, strings.NewReader(c.in), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "null") && !strings.Contains(err.Error(), "no ") {
			t.Errorf("%s: error %v, want one naming what is null or missing", name, err)
		}
	}
}

func TestEvaluateRecovers(t *testing.T) {
	err := evaluate(context.Background(), nil, panicky{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "internal error: boom") {
		t.Fatalf("error %v, want the panic as one error", err)
	}
}

type panicky struct{}

func (panicky) Read([]byte) (int, error) { panic("boom") }

// FuzzRequest: no input makes the companion panic (run, not evaluate:
// the recover is the last resort, not the check).
func FuzzRequest(f *testing.F) {
	for _, c := range oddRequests {
		f.Add(c.in)
	}
	f.Add(`{` + head + `,"validatingPolicies":[` + vap + `],"validatingBindings":[` + vapb + `]}`)
	f.Fuzz(func(t *testing.T, in string) {
		_ = run(context.Background(), nil, strings.NewReader(in), &bytes.Buffer{})
	})
}
