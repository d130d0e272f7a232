package celeval

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/schemacodec"
)

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	return testkit.Object(t, doc)
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team, labels: {app: web}}
spec:
  replicas: 8
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`

const namespace = `
apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {env: prod}}
`

func request(t *testing.T, o string) *admission.PolicyRequest {
	return &admission.PolicyRequest{
		Kind: admission.PolicyRequestKind, APIVersion: admission.PolicyAPIVersion,
		Operation: "CREATE", Object: obj(t, o), Namespaced: true,
		Resource:     admission.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Namespace:    obj(t, namespace),
		UserInfo:     &admission.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}},
		FieldManager: "kubectl",
	}
}

func policy(t *testing.T, name, spec string) *unstructured.Unstructured {
	return obj(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: "+name+"}\nspec:\n"+spec)
}

func binding(t *testing.T, name, spec string) *unstructured.Unstructured {
	return obj(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: "+name+"}\nspec:\n"+spec)
}

const replicasPolicy = `
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  validations:
  - expression: object.spec.replicas <= 5
    messageExpression: "'replicas must be at most 5, not ' + string(object.spec.replicas)"
`

func TestValidatingDeny(t *testing.T) {
	req := request(t, deployment)
	req.ValidatingPolicies = append(req.ValidatingPolicies, policy(t, "max-replicas", replicasPolicy))
	req.ValidatingBindings = append(req.ValidatingBindings, binding(t, "max-replicas", "  policyName: max-replicas\n  validationActions: [Deny]\n"))
	res, err := Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: replicas must be at most 5, not 8`
	if res.Denied != want || res.Code != 422 {
		t.Fatalf("denied %q (%d), want %q", res.Denied, res.Code, want)
	}
	if len(res.Bindings) != 1 || res.Bindings[0].Outcome != admission.Denied {
		t.Fatalf("bindings %+v", res.Bindings)
	}
}

func TestValidatingWarnAuditAndParams(t *testing.T) {
	req := request(t, deployment)
	req.ValidatingPolicies = append(req.ValidatingPolicies, policy(t, "max-replicas", `
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  matchConditions:
  - name: alice-only
    expression: request.userInfo.username == 'alice'
  validations:
  - expression: object.spec.replicas <= int(params.data.max)
    message: too many replicas
  auditAnnotations:
  - key: replicas
    valueExpression: "string(object.spec.replicas)"
`))
	req.ValidatingBindings = append(req.ValidatingBindings,
		binding(t, "warn", "  policyName: max-replicas\n  validationActions: [Warn, Audit]\n  paramRef: {name: limits, parameterNotFoundAction: Deny}\n"),
		binding(t, "missing", "  policyName: max-replicas\n  validationActions: [Deny]\n  paramRef: {name: nope, parameterNotFoundAction: Allow}\n"))
	req.Params = []admission.ParamSet{{APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespaced: true,
		Items: []*unstructured.Unstructured{obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: team}\ndata: {max: '3'}\n")}}}
	res, err := Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Denied != "" {
		t.Fatalf("denied: %s", res.Denied)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'warn': too many replicas" {
		t.Fatalf("warnings %q", res.Warnings)
	}
	if res.AuditAnnotations["max-replicas/replicas"] != "8" || !strings.Contains(res.AuditAnnotations[validationFailureAnnotation], "too many replicas") {
		t.Fatalf("audit annotations %v", res.AuditAnnotations)
	}
	got := map[string]admission.Outcome{}
	for _, b := range res.Bindings {
		got[b.Binding] = b.Outcome
	}
	if got["warn"] != admission.Warned || got["missing"] != admission.Admitted {
		t.Fatalf("outcomes %v", got)
	}
	// The match condition leaves other users out.
	req.UserInfo.Username = "bob"
	res, err = Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Fatalf("warnings %q", res.Warnings)
	}
}

func TestValidatingAuthorizerNotEvaluable(t *testing.T) {
	req := request(t, deployment)
	req.ValidatingPolicies = append(req.ValidatingPolicies, policy(t, "authz", `
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations:
  - expression: authorizer.group('apps').resource('deployments').namespace('team').check('delete').allowed()
`))
	req.ValidatingBindings = append(req.ValidatingBindings, binding(t, "authz", "  policyName: authz\n  validationActions: [Deny]\n"))
	res, err := Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotEvaluable) != 1 || res.Bindings[0].Outcome != admission.NotEvaluable {
		t.Fatalf("result %+v", res)
	}
}

func TestMutatingJSONPatch(t *testing.T) {
	req := request(t, deployment)
	req.MutatingPolicies = append(req.MutatingPolicies, obj(t, `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: label}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/metadata/labels/audited', value: 'true'}]"
`))
	req.MutatingBindings = append(req.MutatingBindings, obj(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {name: label}\nspec: {policyName: label}\n"))
	withSchema(t, req)
	res, err := Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Object == nil || res.Object.GetLabels()["audited"] != "true" {
		t.Fatalf("result %+v", res)
	}
	if len(res.Bindings) != 1 || res.Bindings[0].Outcome != admission.Mutated || strings.Join(res.Bindings[0].Paths[0], ".") != "metadata.labels.audited" {
		t.Fatalf("bindings %+v", res.Bindings)
	}
}

// withSchema types req's object by deduction (JSON patches need no more).
func withSchema(t *testing.T, req *admission.PolicyRequest) {
	t.Helper()
	b, err := schemacodec.Encode(typed.DeducedParseableType.Schema)
	if err != nil {
		t.Fatal(err)
	}
	req.Schema, req.TypeName = b, *typed.DeducedParseableType.TypeRef.NamedType
}
