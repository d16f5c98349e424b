// Package helm holds the offline checks of the debated Helm chart: it renders
// the chart with the Helm SDK (no cluster, no helm binary) and decodes every
// manifest strictly into the Kubernetes API types.
package helm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir    = "debated"
	releaseName = "debated"
	namespace   = "debated"
	grpcPort    = 50051
	healthPort  = 8081
	metricsPort = 9090
	nonRootUID  = 65532
)

// The variables that carry secrets: never in the ConfigMap, never inline.
var secretVars = []string{"DEBATED_DATABASE_URL", "DEBATED_ADMIN_TOKEN", "DEBATED_SIGNING_KEYS", "DEBATED_CHECKPOINT_KEYS", "DEBATED_LLM_API_KEY"}

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor the
// chart uses; strict decoding rejects any field not listed here.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Scheme        string `json:"scheme"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// rendered is one render of the chart, decoded.
type rendered struct {
	hooks          []*release.Hook
	deployment     *appsv1.Deployment
	service        *corev1.Service
	configMap      *corev1.ConfigMap
	secrets        []*corev1.Secret // the chart's own (not hooks)
	hookSecrets    []*corev1.Secret
	serviceAccount *corev1.ServiceAccount
	pdb            *policyv1.PodDisruptionBudget
	hpa            *autoscalingv2.HorizontalPodAutoscaler
	job            *batchv1.Job
	serviceMonitor *serviceMonitor
	raw            []string // every document, as rendered
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	if err := ch.Validate(); err != nil {
		t.Fatalf("chart metadata: %v", err)
	}
	if !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, "1.30.0") {
		t.Fatalf("kubeVersion %q should admit 1.30 (native grpc probes and preStop sleep)", ch.Metadata.KubeVersion)
	}
	return ch
}

func render(t *testing.T, overrides map[string]any) (map[string]string, error) {
	t.Helper()
	ch := loadChart(t)
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.31.0", Major: "1", Minor: "31"}
	vals, err := chartutil.ToRenderValues(ch, overrides, chartutil.ReleaseOptions{
		Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	return engine.Engine{Strict: true}.Render(ch, vals)
}

// renderDecoded renders and strictly decodes every document.
func renderDecoded(t *testing.T, overrides map[string]any) *rendered {
	t.Helper()
	files, err := render(t, overrides)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	// Helm's own splitting and hook detection, as `helm install` does it.
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatalf("sort manifests: %v", err)
	}
	r := &rendered{hooks: hooks}
	for _, h := range hooks {
		r.decode(t, h.Path, h.Manifest, true)
	}
	for _, m := range manifests {
		r.decode(t, m.Name, m.Content, false)
	}
	if r.deployment == nil || r.service == nil || r.configMap == nil {
		t.Fatalf("missing Deployment, Service or ConfigMap")
	}
	return r
}

func strict[T any](t *testing.T, name, doc string) *T {
	t.Helper()
	v := new(T)
	if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
		t.Fatalf("%s: strict decode into %T: %v\n%s", name, v, err, doc)
	}
	return v
}

func (r *rendered) decode(t *testing.T, name, doc string, hook bool) {
	t.Helper()
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if head.Kind == "" {
		return // an empty document
	}
	r.raw = append(r.raw, doc)
	gvk := head.APIVersion + "/" + head.Kind
	once := func(set bool) {
		if set {
			t.Fatalf("%s: more than one %s", name, gvk)
		}
	}
	switch gvk {
	case "apps/v1/Deployment":
		once(r.deployment != nil)
		r.deployment = strict[appsv1.Deployment](t, name, doc)
	case "v1/Service":
		once(r.service != nil)
		r.service = strict[corev1.Service](t, name, doc)
	case "v1/ConfigMap":
		once(r.configMap != nil)
		r.configMap = strict[corev1.ConfigMap](t, name, doc)
	case "v1/Secret":
		s := strict[corev1.Secret](t, name, doc)
		if hook {
			r.hookSecrets = append(r.hookSecrets, s)
		} else {
			r.secrets = append(r.secrets, s)
		}
	case "v1/ServiceAccount":
		once(r.serviceAccount != nil)
		r.serviceAccount = strict[corev1.ServiceAccount](t, name, doc)
	case "policy/v1/PodDisruptionBudget":
		once(r.pdb != nil)
		r.pdb = strict[policyv1.PodDisruptionBudget](t, name, doc)
	case "autoscaling/v2/HorizontalPodAutoscaler":
		once(r.hpa != nil)
		r.hpa = strict[autoscalingv2.HorizontalPodAutoscaler](t, name, doc)
	case "batch/v1/Job":
		once(r.job != nil)
		if !hook {
			t.Fatalf("%s: the migration Job must be a Helm hook", name)
		}
		r.job = strict[batchv1.Job](t, name, doc)
	case "monitoring.coreos.com/v1/ServiceMonitor":
		once(r.serviceMonitor != nil)
		r.serviceMonitor = strict[serviceMonitor](t, name, doc)
	default:
		t.Fatalf("%s: unexpected kind %s", name, gvk)
	}
}

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValuesFile(filepath.Join(chartDir, file))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// knownVars lists the DEBATED_* variables that the README's configuration
// table documents and that cmd/debated reads, with the binary's parser.
func knownVars(t *testing.T) map[string]bool {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(DEBATED_[A-Z0-9_]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		documented[m[1]] = true
	}
	if len(documented) < 20 {
		t.Fatalf("found only %d variables in the README's configuration table", len(documented))
	}
	read := map[string]bool{}
	srcs, err := filepath.Glob("../../cmd/debated/*.go")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("cmd/debated sources: %v", err)
	}
	for _, f := range srcs {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(DEBATED_[A-Z0-9_]+)"`).FindAllStringSubmatch(string(b), -1) {
			read[m[1]] = true
		}
	}
	known := map[string]bool{}
	for v := range documented {
		if read[v] {
			known[v] = true
		}
	}
	return known
}

// varParsers checks a value as the binary parses it (cmd/debated parseConfig).
var varParsers = map[string]func(string) error{
	"DEBATED_MIGRATE_ON_START":     func(s string) error { _, err := strconv.ParseBool(s); return err },
	"DEBATED_SHUTDOWN_TIMEOUT":     parseDuration,
	"DEBATED_JOB_SLICE":            parseDuration,
	"DEBATED_RESCUE_AFTER":         parseDuration,
	"DEBATED_LLM_TIMEOUT":          parseDuration,
	"DEBATED_MAX_RECV_MSG_BYTES":   parseInt,
	"DEBATED_WORKERS":              parseInt,
	"DEBATED_TENANT_BURST":         parseInt,
	"DEBATED_MAX_RUNNING_DEBATES":  parseInt,
	"DEBATED_LLM_TOKEN_BUDGET":     parseInt,
	"DEBATED_MAX_GRADE_CLAIMS":     parseInt,
	"DEBATED_GRADING_CLAIM_BUDGET": parseInt,
	"DEBATED_LLM_ALLOW_PRIVATE":    func(s string) error { _, err := strconv.ParseBool(s); return err },
	"DEBATED_TENANT_RPS":           func(s string) error { _, err := strconv.ParseFloat(s, 64); return err },
	"DEBATED_LOG_LEVEL": func(s string) error {
		return oneOf(s, "debug", "info", "warn", "error")
	},
	"DEBATED_LOG_FORMAT": func(s string) error { return oneOf(s, "json", "text") },
}

func parseDuration(s string) error { _, err := time.ParseDuration(s); return err }
func parseInt(s string) error      { _, err := strconv.Atoi(s); return err }
func oneOf(s string, allowed ...string) error {
	if !slices.Contains(allowed, s) {
		return fmt.Errorf("%q not one of %v", s, allowed)
	}
	return nil
}

// checkCommon asserts what every render must satisfy.
func checkCommon(t *testing.T, r *rendered) {
	t.Helper()
	known := knownVars(t)
	d := r.deployment
	pod := d.Spec.Template.Spec
	podLabels := d.Spec.Template.Labels

	// Selectors.
	if !subset(d.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("deployment selector %v does not match its pods %v", d.Spec.Selector.MatchLabels, podLabels)
	}
	if !subset(r.service.Spec.Selector, podLabels) {
		t.Errorf("service selector %v does not match the pods", r.service.Spec.Selector)
	}

	// The container.
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !slices.Equal(c.Args, []string{"serve"}) || len(c.Command) != 0 {
		t.Errorf("container runs %v %v, want the image's entrypoint with args [serve]", c.Command, c.Args)
	}
	wantPort(t, "container", c.Ports, "grpc", grpcPort)
	wantPort(t, "container", c.Ports, "metrics", metricsPort)

	// Probes: native gRPC health v1 on the plaintext health port.
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe, "startup": c.StartupProbe} {
		switch {
		case p == nil:
			t.Errorf("%s probe missing", name)
		case p.GRPC == nil || p.HTTPGet != nil || p.Exec != nil || p.TCPSocket != nil:
			t.Errorf("%s probe is not a grpc probe: %+v", name, p.ProbeHandler)
		case p.GRPC.Port != healthPort:
			t.Errorf("%s probe on port %d, want %d", name, p.GRPC.Port, healthPort)
		case p.GRPC.Service != nil && *p.GRPC.Service != "":
			t.Errorf("%s probe checks service %q, want the server's overall health", name, *p.GRPC.Service)
		}
	}

	// Drain: preStop sleep, then SIGTERM; the grace period covers both.
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds <= 0 {
		t.Fatalf("want a preStop sleep, got %+v", c.Lifecycle)
	}
	shutdown := 25 * time.Second
	if s, ok := r.configMap.Data["DEBATED_SHUTDOWN_TIMEOUT"]; ok {
		var err error
		if shutdown, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	sleep := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	var grace time.Duration
	if pod.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	}
	if grace <= sleep+shutdown {
		t.Errorf("terminationGracePeriodSeconds %v must exceed preStop %v + DEBATED_SHUTDOWN_TIMEOUT %v", grace, sleep, shutdown)
	}

	// Security.
	checkPodSecurity(t, "deployment", pod)
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("want cpu/memory requests and a memory limit, got %+v", c.Resources)
	}

	// Writable paths: /data (DEBATED_DATA_DIR) and /tmp on emptyDirs.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	for _, p := range []string{"/data", "/tmp"} {
		if mounts[p] == "" {
			t.Errorf("no volume mounted at %s (the root filesystem is read-only)", p)
		}
	}

	// Configuration: the ConfigMap through envFrom, secrets through secretKeyRef.
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil || c.EnvFrom[0].ConfigMapRef.Name != r.configMap.Name {
		t.Errorf("want envFrom the ConfigMap %s, got %+v", r.configMap.Name, c.EnvFrom)
	}
	cm := r.configMap.Data
	for k, v := range cm {
		if !known[k] {
			t.Errorf("ConfigMap sets %s, which is not a variable the README documents and debated reads", k)
		}
		if slices.Contains(secretVars, k) {
			t.Errorf("ConfigMap carries the secret %s", k)
		}
		if p := varParsers[k]; p != nil {
			if err := p(v); err != nil {
				t.Errorf("ConfigMap %s=%q: the binary would reject it: %v", k, v, err)
			}
		}
	}
	if cm["DEBATED_LISTEN"] != fmt.Sprintf(":%d", grpcPort) {
		t.Errorf("DEBATED_LISTEN = %q, want :%d (all interfaces: the probes and Service reach the pod IP)", cm["DEBATED_LISTEN"], grpcPort)
	}
	if cm["DEBATED_METRICS_ADDR"] != fmt.Sprintf(":%d", metricsPort) {
		t.Errorf("DEBATED_METRICS_ADDR = %q, want :%d", cm["DEBATED_METRICS_ADDR"], metricsPort)
	}
	if cm["DEBATED_DATA_DIR"] != "/data" {
		t.Errorf("DEBATED_DATA_DIR = %q, want /data", cm["DEBATED_DATA_DIR"])
	}
	checkEnv(t, "deployment", c.Env, known)

	// Service.
	wantServicePort(t, r.service, "grpc", grpcPort)
	wantServicePort(t, r.service, "metrics", metricsPort)

	// Service account: no API token in the pods.
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken should be false")
	}
	if r.serviceAccount != nil && r.serviceAccount.Name != pod.ServiceAccountName {
		t.Errorf("pods use service account %q, chart makes %q", pod.ServiceAccountName, r.serviceAccount.Name)
	}

	// PDB and HPA target the Deployment.
	if r.pdb != nil && !subset(r.pdb.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("PDB selector %v does not match the pods", r.pdb.Spec.Selector.MatchLabels)
	}
	if r.hpa != nil {
		ref := r.hpa.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.Name != d.Name {
			t.Errorf("HPA targets %+v, want the Deployment %s", ref, d.Name)
		}
		if d.Spec.Replicas != nil {
			t.Errorf("with the HPA on, the Deployment must not set replicas (it would fight the HPA on upgrade)")
		}
		if len(r.hpa.Spec.Metrics) != 1 || r.hpa.Spec.Metrics[0].Resource == nil || r.hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
			r.hpa.Spec.Metrics[0].Resource.Target.AverageUtilization == nil {
			t.Errorf("want one CPU utilization metric, got %+v", r.hpa.Spec.Metrics)
		}
	}

	// The migration Job: a pre-install/pre-upgrade hook running `debated migrate`.
	if r.job != nil {
		checkMigration(t, r, known)
	}

	// ServiceMonitor: scrapes the Service's metrics port.
	if sm := r.serviceMonitor; sm != nil {
		if sm.APIVersion != "monitoring.coreos.com/v1" || !subset(sm.Spec.Selector.MatchLabels, r.service.Labels) {
			t.Errorf("ServiceMonitor %s selector %v does not select the Service %v", sm.APIVersion, sm.Spec.Selector.MatchLabels, r.service.Labels)
		}
		if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor endpoints %+v, want port metrics path /metrics", sm.Spec.Endpoints)
		}
		if _, err := time.ParseDuration(sm.Spec.Endpoints[0].Interval); err != nil {
			t.Errorf("ServiceMonitor interval: %v", err)
		}
	}
}

func checkMigration(t *testing.T, r *rendered, known map[string]bool) {
	t.Helper()
	var hook *release.Hook
	for _, h := range r.hooks {
		if h.Kind == "Job" {
			hook = h
		}
	}
	if hook == nil {
		t.Fatal("Helm does not see the Job as a hook")
	}
	if !slices.Contains(hook.Events, release.HookPreInstall) || !slices.Contains(hook.Events, release.HookPreUpgrade) || len(hook.Events) != 2 {
		t.Errorf("migration hook events %v, want pre-install and pre-upgrade", hook.Events)
	}
	if !slices.Contains(hook.DeletePolicies, release.HookBeforeHookCreation) {
		t.Errorf("migration hook delete policies %v: want before-hook-creation so a re-run replaces it", hook.DeletePolicies)
	}
	// Hook secrets must exist before the Job (lower weight), and be hooks themselves.
	for _, h := range r.hooks {
		if h.Kind == "Secret" && (h.Weight >= hook.Weight || !slices.Equal(h.Events, hook.Events)) {
			t.Errorf("hook Secret %s: weight %d events %v; want below the Job's %d, same events", h.Name, h.Weight, h.Events, hook.Weight)
		}
	}
	j := r.job
	pod := j.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever && pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("job restartPolicy %q", pod.RestartPolicy)
	}
	if j.Spec.BackoffLimit == nil || j.Spec.ActiveDeadlineSeconds == nil {
		t.Errorf("job needs a backoffLimit and an activeDeadlineSeconds")
	}
	if len(pod.Containers) != 1 || !slices.Equal(pod.Containers[0].Args, []string{"migrate"}) {
		t.Fatalf("job containers %+v, want one running migrate", pod.Containers)
	}
	c := pod.Containers[0]
	if c.Image != r.deployment.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("job image %q differs from the service's", c.Image)
	}
	checkPodSecurity(t, "job", pod)
	// The Job's pod must not count as a server pod: not in the Service's
	// endpoints, the ReplicaSet or the PDB.
	jobLabels := j.Spec.Template.Labels
	if subset(r.deployment.Spec.Selector.MatchLabels, jobLabels) || subset(r.service.Spec.Selector, jobLabels) ||
		(r.pdb != nil && subset(r.pdb.Spec.Selector.MatchLabels, jobLabels)) {
		t.Errorf("the migration pod's labels %v match the service's selectors", jobLabels)
	}
	checkEnv(t, "job", c.Env, known)
	var url *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "DEBATED_DATABASE_URL" {
			url = &c.Env[i]
		}
	}
	if url == nil || url.ValueFrom == nil || url.ValueFrom.SecretKeyRef == nil {
		t.Fatalf("job must read DEBATED_DATABASE_URL from a Secret, got %+v", url)
	}
	if url.ValueFrom.SecretKeyRef.Optional != nil && *url.ValueFrom.SecretKeyRef.Optional {
		t.Errorf("the job's database URL must not be optional")
	}
	// A Secret made by this chart is not there yet at pre-install: only a hook
	// Secret or an existing one may be named.
	for _, s := range r.secrets {
		if s.Name == url.ValueFrom.SecretKeyRef.Name {
			t.Errorf("job reads the chart's regular Secret %s, which does not exist yet at pre-install", s.Name)
		}
	}
}

func checkPodSecurity(t *testing.T, what string, pod corev1.PodSpec) {
	t.Helper()
	ps := pod.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != nonRootUID ||
		ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s pod securityContext %+v: want runAsNonRoot, runAsUser %d, seccomp RuntimeDefault", what, ps, nonRootUID)
	}
	for _, c := range pod.Containers {
		s := c.SecurityContext
		if s == nil {
			t.Errorf("%s container %s: no securityContext", what, c.Name)
			continue
		}
		if s.RunAsNonRoot == nil || !*s.RunAsNonRoot || s.RunAsUser == nil || *s.RunAsUser != nonRootUID {
			t.Errorf("%s container %s: want runAsNonRoot and runAsUser %d", what, c.Name, nonRootUID)
		}
		if s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem {
			t.Errorf("%s container %s: want readOnlyRootFilesystem", what, c.Name)
		}
		if s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation {
			t.Errorf("%s container %s: want allowPrivilegeEscalation false", what, c.Name)
		}
		if s.Privileged != nil && *s.Privileged {
			t.Errorf("%s container %s: privileged", what, c.Name)
		}
		if s.Capabilities == nil || !slices.Equal(s.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(s.Capabilities.Add) != 0 {
			t.Errorf("%s container %s: want capabilities drop [ALL] and none added, got %+v", what, c.Name, s.Capabilities)
		}
		if s.SeccompProfile == nil || s.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s container %s: want seccomp RuntimeDefault", what, c.Name)
		}
	}
}

// checkEnv: every DEBATED_* variable is known, and secrets come from a Secret.
func checkEnv(t *testing.T, what string, env []corev1.EnvVar, known map[string]bool) {
	t.Helper()
	for _, e := range env {
		if strings.HasPrefix(e.Name, "DEBATED_") && !known[e.Name] {
			t.Errorf("%s sets %s, which is not a variable the README documents and debated reads", what, e.Name)
		}
		if slices.Contains(secretVars, e.Name) {
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Errorf("%s: %s is inlined, want a secretKeyRef", what, e.Name)
			}
		}
	}
}

func wantPort(t *testing.T, what string, ports []corev1.ContainerPort, name string, port int32) {
	t.Helper()
	for _, p := range ports {
		if p.Name == name {
			if p.ContainerPort != port {
				t.Errorf("%s port %s = %d, want %d", what, name, p.ContainerPort, port)
			}
			return
		}
	}
	t.Errorf("%s has no port %s", what, name)
}

func wantServicePort(t *testing.T, s *corev1.Service, name string, port int32) {
	t.Helper()
	for _, p := range s.Spec.Ports {
		if p.Name == name {
			if p.Port != port || p.TargetPort.StrVal != name {
				t.Errorf("service port %s = %d -> %s, want %d -> %s", name, p.Port, p.TargetPort.String(), port, name)
			}
			return
		}
	}
	t.Errorf("service has no port %s", name)
}

func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func secretRefs(c corev1.Container) map[string]string {
	refs := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs[e.Name] = e.ValueFrom.SecretKeyRef.Name
		}
	}
	return refs
}

func TestDefaultValues(t *testing.T) {
	r := renderDecoded(t, nil)
	checkCommon(t, r)
	if n := r.deployment.Spec.Replicas; n == nil || *n != 1 {
		t.Errorf("default replicas %v, want 1 (the embedded store is per pod)", n)
	}
	if len(r.secrets)+len(r.hookSecrets) != 0 {
		t.Errorf("no secret values given, yet the chart makes a Secret")
	}
	if len(secretRefs(r.deployment.Spec.Template.Spec.Containers[0])) != 0 {
		t.Errorf("no Secret, yet the Deployment references one")
	}
	if r.job != nil {
		t.Errorf("no database configured, yet the migration Job is rendered")
	}
	if r.configMap.Data["DEBATED_MIGRATE_ON_START"] != "true" {
		t.Errorf("without the Job, the service must migrate at start")
	}
	if r.serviceMonitor != nil || r.hpa != nil {
		t.Errorf("ServiceMonitor and HPA are off by default")
	}
	if r.pdb == nil || r.pdb.Spec.MaxUnavailable == nil || r.pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("default PDB should allow one disruption (one replica), got %+v", r.pdb)
	}
}

func TestProductionValues(t *testing.T) {
	r := renderDecoded(t, readValues(t, "values-production.yaml"))
	checkCommon(t, r)
	if r.hpa == nil || r.hpa.Spec.MinReplicas == nil || *r.hpa.Spec.MinReplicas != 3 || r.hpa.Spec.MaxReplicas < 3 {
		t.Errorf("production wants an HPA from 3 replicas, got %+v", r.hpa)
	}
	if r.pdb == nil || r.pdb.Spec.MinAvailable == nil || r.pdb.Spec.MinAvailable.IntValue() != 2 || r.pdb.Spec.MaxUnavailable != nil {
		t.Errorf("production wants a PDB minAvailable 2, got %+v", r.pdb)
	}
	if r.serviceMonitor == nil {
		t.Fatal("production wants a ServiceMonitor")
	}
	if r.serviceMonitor.Metadata.Labels["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v", r.serviceMonitor.Metadata.Labels)
	}
	if len(r.secrets)+len(r.hookSecrets) != 0 {
		t.Errorf("production uses existing Secrets; the chart must not make one")
	}
	refs := secretRefs(r.deployment.Spec.Template.Spec.Containers[0])
	for _, v := range secretVars {
		if refs[v] != "debated-secrets" {
			t.Errorf("%s should come from the existing Secret debated-secrets, got %q", v, refs[v])
		}
	}
	if r.job == nil {
		t.Fatal("production wants the migration Job")
	}
	if got := secretRefs(r.job.Spec.Template.Spec.Containers[0])["DEBATED_DATABASE_URL"]; got != "debated-migrate" {
		t.Errorf("migration reads its URL from %q, want the schema owner's Secret debated-migrate", got)
	}
	if r.configMap.Data["DEBATED_MIGRATE_ON_START"] != "false" {
		t.Errorf("with the migration Job, replicas should not migrate at start")
	}
	tsc := r.deployment.Spec.Template.Spec.TopologySpreadConstraints
	if len(tsc) != 1 || tsc[0].LabelSelector == nil || !subset(tsc[0].LabelSelector.MatchLabels, r.deployment.Spec.Template.Labels) {
		t.Errorf("topology spread constraint should select the release's pods: %+v", tsc)
	}
}

func TestInlineSecrets(t *testing.T) {
	vals := map[string]any{
		"replicaCount": 2,
		"secrets": map[string]any{
			"databaseURL":    "postgres://app:s3cret-db@pg:5432/debated",
			"adminToken":     "s3cret-admin",
			"signingKeys":    "v1:s3cret-signing-key-base64",
			"checkpointKeys": "v1:s3cret-checkpoint-key-base64",
			"llmAPIKey":      "s3cret-llm",
		},
		"config": map[string]any{
			"llm":       map[string]any{"baseURL": "https://api.openai.com/v1", "model": "gpt-4.1"},
			"tenantRPS": 2.5,
		},
		"extraEnv": []any{map[string]any{"name": "OTEL_SERVICE_NAME", "value": "debated"}},
	}
	r := renderDecoded(t, vals)
	checkCommon(t, r)
	if len(r.secrets) != 1 {
		t.Fatalf("want the chart's Secret, got %d", len(r.secrets))
	}
	for _, v := range secretVars {
		if r.secrets[0].StringData[v] == "" {
			t.Errorf("Secret lacks %s", v)
		}
	}
	// The secret values appear in the Secrets and nowhere else.
	for _, doc := range r.raw {
		if strings.Contains(doc, "kind: Secret") {
			continue
		}
		if strings.Contains(doc, "s3cret") {
			t.Errorf("a secret value leaked into a non-Secret manifest:\n%s", doc)
		}
	}
	refs := secretRefs(r.deployment.Spec.Template.Spec.Containers[0])
	for _, v := range secretVars {
		if refs[v] != r.secrets[0].Name {
			t.Errorf("%s from %q, want the chart's Secret %s", v, refs[v], r.secrets[0].Name)
		}
	}
	if r.job == nil || len(r.hookSecrets) != 1 {
		t.Fatalf("want the migration Job and its hook Secret")
	}
	if got := secretRefs(r.job.Spec.Template.Spec.Containers[0])["DEBATED_DATABASE_URL"]; got != r.hookSecrets[0].Name {
		t.Errorf("migration reads %q, want the hook Secret %s", got, r.hookSecrets[0].Name)
	}
	if r.configMap.Data["DEBATED_LLM_MODEL"] != "gpt-4.1" || r.configMap.Data["DEBATED_TENANT_RPS"] != "2.5" {
		t.Errorf("ConfigMap %v", r.configMap.Data)
	}
	if r.configMap.Data["DEBATED_MAX_RECV_MSG_BYTES"] != "16777216" {
		t.Errorf("large integers must render as integers, got %q", r.configMap.Data["DEBATED_MAX_RECV_MSG_BYTES"])
	}
	// The checksum annotation rolls the pods when a secret changes.
	vals["secrets"].(map[string]any)["adminToken"] = "s3cret-admin-2"
	r2 := renderDecoded(t, vals)
	if r.deployment.Spec.Template.Annotations["checksum/secret"] == r2.deployment.Spec.Template.Annotations["checksum/secret"] {
		t.Errorf("changing a secret does not change the pod template")
	}
}

func TestRejectedValues(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"replicas without PostgreSQL": {"replicaCount": 3},
		"HPA without PostgreSQL":      {"autoscaling": map[string]any{"enabled": true}},
		"model API without a model":   {"config": map[string]any{"llm": map[string]any{"baseURL": "http://vllm:8000/v1"}}},
	} {
		if _, err := render(t, vals); err == nil {
			t.Errorf("%s: rendered, want an error", name)
		}
	}
}

// TestValuesDocumented keeps values.yaml the reference: every top-level key
// the production example sets exists in values.yaml.
func TestValuesDocumented(t *testing.T) {
	base := readValues(t, "values.yaml")
	var walk func(path string, prod, def map[string]any)
	walk = func(path string, prod, def map[string]any) {
		for k, v := range prod {
			dv, ok := def[k]
			if !ok {
				if path == ".metrics.serviceMonitor.labels" {
					continue // free-form
				}
				t.Errorf("values-production.yaml sets %s.%s, which values.yaml does not define", path, k)
				continue
			}
			pm, ok1 := v.(map[string]any)
			dm, ok2 := dv.(map[string]any)
			if ok1 && ok2 {
				walk(path+"."+k, pm, dm)
			}
		}
	}
	walk("", readValues(t, "values-production.yaml"), base)
	// Every value is JSON: nothing Helm could not pass to the templates.
	if _, err := json.Marshal(base); err != nil {
		t.Fatal(err)
	}
}
