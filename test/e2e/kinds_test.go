package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
)

// kindManifests are a typical manifest of each namespaced built-in kind
// the test bed serves and no test bed controller writes; %s is the value
// of a label each step changes.
var kindManifests = map[string]string{
	"cm/c":                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {rev: '%s'}}\ndata: {a: '1'}\nbinaryData: {b: aGk=}\n",
	"secret/s":                   "apiVersion: v1\nkind: Secret\nmetadata: {name: s, labels: {rev: '%s'}}\ntype: kubernetes.io/basic-auth\nstringData: {username: admin, password: pw}\n",
	"svc/web":                    "apiVersion: v1\nkind: Service\nmetadata: {name: web, labels: {rev: '%s'}}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n",
	"svc/hl":                     "apiVersion: v1\nkind: Service\nmetadata: {name: hl, labels: {rev: '%s'}}\nspec:\n  clusterIP: None\n  selector: {app: db}\n  ports: [{port: 5432}]\n",
	"svc/ext":                    "apiVersion: v1\nkind: Service\nmetadata: {name: ext, labels: {rev: '%s'}}\nspec:\n  type: ExternalName\n  externalName: example.com\n",
	"sa/robot":                   "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: robot, labels: {rev: '%s'}}\nautomountServiceAccountToken: false\n",
	"pod/p":                      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {rev: '%s'}}\nspec:\n  containers:\n  - name: app\n    image: nginx:1.27\n    ports: [{containerPort: 80}]\n    resources: {requests: {cpu: 100m, memory: 64Mi}}\n    env: [{name: A, value: a}]\n    volumeMounts: [{name: tmp, mountPath: /tmp}]\n  volumes: [{name: tmp, emptyDir: {}}]\n",
	"pvc/data":                   "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, labels: {rev: '%s'}}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
	"rc/old":                     "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: old, labels: {rev: '%s'}}\nspec:\n  replicas: 0\n  selector: {app: old}\n  template:\n    metadata: {labels: {app: old}}\n    spec:\n      containers: [{name: app, image: 'nginx:1.27'}]\n",
	"quota/q":                    "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, labels: {rev: '%s'}}\nspec:\n  hard: {pods: '10', requests.cpu: '4'}\n",
	"podtemplate/pt":             "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt, labels: {rev: '%s'}}\ntemplate:\n  metadata: {labels: {app: pt}}\n  spec:\n    containers: [{name: app, image: 'nginx:1.27'}]\n",
	"sts/db":                     "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, labels: {rev: '%s'}}\nspec:\n  serviceName: db\n  replicas: 0\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: 'postgres:17'}]\n",
	"cronjob/nightly":            "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, labels: {rev: '%s'}}\nspec:\n  schedule: '0 3 * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n          containers: [{name: run, image: 'busybox:1.36'}]\n",
	"pdb/web":                    "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, labels: {rev: '%s'}}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: web}}\n",
	"ingress/web":                "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, labels: {rev: '%s'}}\nspec:\n  rules:\n  - host: web.example.com\n    http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend: {service: {name: web, port: {number: 80}}}\n",
	"netpol/deny":                "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: deny, labels: {rev: '%s'}}\nspec:\n  podSelector: {}\n  policyTypes: [Ingress]\n  ingress: [{from: [{podSelector: {matchLabels: {app: web}}}], ports: [{port: 80}]}]\n",
	"role/reader":                "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader, labels: {rev: '%s'}}\nrules:\n- apiGroups: ['']\n  resources: [configmaps]\n  verbs: [get, list]\n",
	"rolebinding/reader":         "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: reader, labels: {rev: '%s'}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}\nsubjects: [{kind: ServiceAccount, name: robot}]\n",
	"lease/l":                    "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l, labels: {rev: '%s'}}\nspec: {holderIdentity: me, leaseDurationSeconds: 15}\n",
	"ep/web":                     "apiVersion: v1\nkind: Endpoints\nmetadata: {name: web, labels: {rev: '%s'}}\nsubsets: [{addresses: [{ip: 10.0.0.1}], ports: [{name: http, port: 80}]}]\n",
	"ev/e":                       "apiVersion: v1\nkind: Event\nmetadata: {name: e, labels: {rev: '%s'}}\ninvolvedObject: {kind: ConfigMap, name: c, apiVersion: v1, namespace: '@NS@'}\nreason: Tested\nmessage: hello\ntype: Normal\nsource: {component: tester}\ncount: 1\n",
	"events.v1.events.k8s.io/e2": "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: e2, labels: {rev: '%s'}}\neventTime: '2026-11-25T10:00:00.000000Z'\nreportingController: example.com/tester\nreportingInstance: tester-1\naction: Test\nreason: Tested\nnote: hello\ntype: Normal\nregarding: {kind: ConfigMap, name: c, apiVersion: v1, namespace: '@NS@'}\n",
	"controllerrevision/rev1":    "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: rev1, labels: {rev: '%s'}}\nrevision: 1\ndata: {spec: {template: {spec: {containers: [{name: app, image: 'nginx:1.27'}]}}}}\n",
	"rs/web":                     "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, labels: {rev: '%s'}}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: rs}}\n  template:\n    metadata: {labels: {app: rs}}\n    spec:\n      containers: [{name: app, image: 'nginx:1.27'}]\n",
	"hpa/web":                    "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, labels: {rev: '%s'}}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 5\n  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}}]\n",
	"limits/lr":                  "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, labels: {rev: '%s'}}\nspec:\n  limits: [{type: Container, default: {cpu: 500m}, max: {cpu: '2'}}]\n",
	"resourceclaim/gpu":          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: gpu, labels: {rev: '%s'}}\nspec:\n  devices:\n    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]\n",
	"resourceclaimtemplate/gpu":  "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu, labels: {rev: '%s'}}\nspec:\n  spec:\n    devices:\n      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2}}]\n",
	"csistoragecapacity/cap":     "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: cap, labels: {rev: '%s'}}\nstorageClassName: standard\ncapacity: 10Gi\nnodeTopology: {matchLabels: {topology.example.com/zone: a}}\n",
	"endpointslice/web-1":        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, labels: {rev: '%s'}}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\nports: [{name: http, port: 80}]\n",
}

// clusterManifests are cluster-scoped kinds: NAME is replaced by a name
// of this run (the objects outlive no test: they are deleted at its end).
var clusterManifests = map[string]string{
	"clusterrole":                      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: NAME, labels: {rev: '%s'}}\nrules:\n- apiGroups: [apps]\n  resources: [deployments]\n  verbs: [get, list, watch]\n",
	"clusterrolebinding":               "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: NAME, labels: {rev: '%s'}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: NAME}\nsubjects: [{kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}]\n",
	"priorityclass":                    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: NAME, labels: {rev: '%s'}}\nvalue: 1000\ndescription: batch\n",
	"storageclass":                     "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: NAME, labels: {rev: '%s'}}\nprovisioner: example.com/nfs\nparameters: {server: nfs}\n",
	"ingressclass":                     "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec: {controller: example.com/ingress}\n",
	"namespace":                        "apiVersion: v1\nkind: Namespace\nmetadata: {name: NAME, labels: {rev: '%s'}}\n",
	"persistentvolume":                 "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  hostPath: {path: /tmp/pv}\n",
	"runtimeclass":                     "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: NAME, labels: {rev: '%s'}}\nhandler: runc\n",
	"csidriver":                        "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec: {attachRequired: false}\n",
	"validatingadmissionpolicy":        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  matchConstraints:\n    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]\n  validations: [{expression: 'object.spec.replicas <= 100'}]\n",
	"node":                             "apiVersion: v1\nkind: Node\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec: {unschedulable: true, taints: [{key: example.com/t, effect: NoSchedule}]}\n",
	"validatingadmissionpolicybinding": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  policyName: NAME-absent\n  validationActions: [Deny]\n",
	"mutatingadmissionpolicy":          "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  matchConstraints:\n    resourceRules: [{apiGroups: [example.invalid], apiVersions: [v1], operations: [CREATE], resources: [nothings]}]\n  reinvocationPolicy: Never\n  mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: 'Object{metadata: Object.metadata{labels: {\"a\": \"b\"}}}'}}]\n",
	"mutatingadmissionpolicybinding":   "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec: {policyName: NAME-absent}\n",
	"validatingwebhookconfiguration":   "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: NAME, labels: {rev: '%s'}}\nwebhooks:\n- name: v.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  clientConfig: {url: 'https://127.0.0.1:1/validate'}\n  rules: [{apiGroups: [example.invalid], apiVersions: [v1], operations: [CREATE], resources: [nothings]}]\n",
	"mutatingwebhookconfiguration":     "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: NAME, labels: {rev: '%s'}}\nwebhooks:\n- name: m.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  clientConfig: {url: 'https://127.0.0.1:1/mutate'}\n  rules: [{apiGroups: [example.invalid], apiVersions: [v1], operations: [CREATE], resources: [nothings]}]\n",
	"prioritylevelconfiguration":       "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  type: Limited\n  limited: {nominalConcurrencyShares: 5, limitResponse: {type: Reject}}\n",
	"ipaddress":                        "apiVersion: networking.k8s.io/v1\nkind: IPAddress\nmetadata: {name: '@IP@', labels: {rev: '%s'}}\nspec:\n  parentRef: {group: '', resource: services, namespace: default, name: NAME}\n",
	"servicecidr":                      "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec: {cidrs: ['@CIDR@']}\n",
	"deviceclass":                      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]\n",
	"devicetaintrule":                  "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  deviceSelector: {driver: gpu.example.com, pool: p1}\n  taint: {key: example.com/broken, value: 'yes', effect: NoSchedule}\n",
	"resourceslice":                    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  driver: gpu.example.com\n  nodeName: NAME\n  pool: {name: p1, generation: 1, resourceSliceCount: 1}\n  devices: [{name: gpu-0}]\n",
	"csinode":                          "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  drivers: [{name: csi.example.com, nodeID: NAME, topologyKeys: [topology.example.com/zone]}]\n",
	"volumeattachment":                 "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  attacher: csi.example.com\n  nodeName: NAME\n  source: {persistentVolumeName: NAME}\n",
	"volumeattributesclass":            "apiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata: {name: NAME, labels: {rev: '%s'}}\ndriverName: csi.example.com\nparameters: {iops: '3000'}\n",
	"storageversionmigration":          "apiVersion: storagemigration.k8s.io/v1\nkind: StorageVersionMigration\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  resource: {group: example.invalid, resource: nothings}\n",
	"customresourcedefinition":         "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.NAME.example.com, labels: {rev: '%s'}}\nspec:\n  group: NAME.example.com\n  scope: Namespaced\n  names: {plural: things, singular: thing, kind: Thing}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {type: object, properties: {size: {type: integer, default: 1}}}\n",
	"flowschema":                       "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  priorityLevelConfiguration: {name: global-default}\n  rules: [{subjects: [{kind: Group, group: {name: devs}}], resourceRules: [{verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*']}]}]\n",
}

// admittedOnCreate are the kinds whose create built-in admission that
// kubectl-ssa does not model changes: their create is left out here,
// their updates are checked. (StorageObjectInUseProtection's finalizers
// on PVCs and PVs, a Pod's ServiceAccount, Priority,
// DefaultTolerationSeconds, LimitRanger and RuntimeClass are modelled, and
// their creates checked.) None today.
var admittedOnCreate = map[string]string{}

// reapplyChanges are the kinds whose re-apply of the same manifest
// changes the object, and why (the server's dry run says the same).
var reapplyChanges = map[string]string{
	"node": "TaintNodesByCondition adds the not-ready taint on create; the next apply of the atomic taints list drops it",
}

// TestDiffEveryKind: for each kind above, diff's prediction of a create,
// a re-apply that changes nothing, and a change of a label equals the
// server's dry run (the checks of TestDiffCorpus).
func TestDiffEveryKind(t *testing.T) {
	kinds := make([]string, 0, len(kindManifests))
	for k := range kindManifests {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		m := kindManifests[kind]
		first, second := fmt.Sprintf(m, "1"), fmt.Sprintf(m, "2")
		if !served(t, first) {
			t.Logf("%s: not served by this apiserver at the manifest's version", kind)
			continue
		}
		name := strings.SplitN(kind, "/", 2)[0]
		cases := []diffCase{
			{name: name + ": no change", kind: kind, setup: applyAs(first, "platform"), applied: first, manager: "platform", code: 0},
			{name: name + ": label", kind: kind, setup: applyAs(first, "platform"), applied: second, manager: "platform", code: 1, kinds: []string{"modified"}},
		}
		if _, admitted := admittedOnCreate[kind]; !admitted {
			cases = append(cases, diffCase{name: name + ": create", kind: kind, setup: func(*testing.T, string) {}, applied: first, manager: "platform", code: 1})
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { checkDiffCase(t, c) })
		}
	}
	// Cluster-scoped kinds, each step on an object of its own.
	names := make([]string, 0, len(clusterManifests))
	for k := range clusterManifests {
		names = append(names, k)
	}
	sort.Strings(names)
	run := strings.ToLower(rand.String(5))
	for _, kind := range names {
		for i, step := range []string{"create", "no change", "label"} {
			if _, admitted := admittedOnCreate[kind]; admitted && step == "create" {
				continue
			}
			name := fmt.Sprintf("diff-%s-%s-%d", kind, run, i)
			m := strings.NewReplacer("@IP@", fmt.Sprintf("10.250.%d.%d", len(run)+i, 10+i), "@CIDR@", fmt.Sprintf("10.%d.%d.0/24", 200+i, len(run)), "NAME", name).Replace(clusterManifests[kind])
			first, second := fmt.Sprintf(m, "1"), fmt.Sprintf(m, "2")
			if !served(t, first) {
				t.Logf("%s: not served by this apiserver at the manifest's version", kind)
				break
			}
			t.Cleanup(func() { deleteObject(parse(t, first)) })
			c := diffCase{name: kind + ": " + step, kind: kind + "/" + parse(t, first).GetName(), setup: applyAs(first, "platform"), applied: first, manager: "platform"}
			switch step {
			case "no change":
				if _, changes := reapplyChanges[kind]; changes {
					c.code = 1
				}
			case "create":
				c.setup, c.code = func(*testing.T, string) {}, 1
			case "label":
				c.applied, c.code, c.kinds = second, 1, []string{"modified"}
			}
			t.Run(c.name, func(t *testing.T) { checkDiffCase(t, c) })
		}
	}
}

// served tells whether the apiserver serves manifest's kind at its
// version (older minors serve some kinds at beta versions only).
func served(t *testing.T, manifest string) bool {
	gvk := parse(t, strings.ReplaceAll(manifest, "@IP@", "10.0.0.1")).GroupVersionKind()
	_, err := restMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// deleteObject deletes u, whatever happened to it.
func deleteObject(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	m, err := restMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return
	}
	_ = env.dynamic.Resource(m.Resource).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{})
}

// init adds the kinds whose manifests carry a key's PEM: a certificate
// signing request and a trust bundle, from a key made for this run.
func init() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		panic(err)
	}
	csr, err := x509.CreateCertificateRequest(crand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "tester"}}, key)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Unix(1700000000, 0), NotAfter: time.Unix(2000000000, 0), KeyUsage: x509.KeyUsageCertSign}
	cert, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	request := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}))
	bundle := strconv.Quote(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert})))
	clusterManifests["certificatesigningrequest"] = "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  signerName: example.com/signer\n  usages: [digital signature]\n  expirationSeconds: 3600\n  request: " + request + "\n"
	clusterManifests["clustertrustbundle"] = "apiVersion: certificates.k8s.io/v1\nkind: ClusterTrustBundle\nmetadata: {name: NAME, labels: {rev: '%s'}}\nspec:\n  trustBundle: " + bundle + "\n"
}
