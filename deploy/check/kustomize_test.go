package check

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// objects builds the kustomization in dir and decodes every object strictly
// (unknown fields are errors) into its Kubernetes type, by kind.
func objects(t *testing.T, dir string) map[string][]any {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
	require.NoError(t, err, dir)
	out := map[string][]any{}
	for _, r := range rm.Resources() {
		b, err := r.AsYAML()
		require.NoError(t, err)
		var obj any
		switch r.GetKind() {
		case "Deployment":
			obj = &appsv1.Deployment{}
		case "StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "Service":
			obj = &corev1.Service{}
		case "ConfigMap":
			obj = &corev1.ConfigMap{}
		case "Namespace":
			obj = &corev1.Namespace{}
		case "PodDisruptionBudget":
			obj = &policyv1.PodDisruptionBudget{}
		case "HorizontalPodAutoscaler":
			obj = &autoscalingv2.HorizontalPodAutoscaler{}
		default:
			t.Fatalf("%s: unexpected kind %s", dir, r.GetKind())
		}
		j, err := yaml.YAMLToJSON(b)
		require.NoError(t, err)
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(obj), "%s %s/%s", dir, r.GetKind(), r.GetName())
		out[r.GetKind()] = append(out[r.GetKind()], obj)
	}
	return out
}

// podSpecs are the pod templates of the workloads, by name.
func podSpecs(objs map[string][]any) map[string]corev1.PodSpec {
	out := map[string]corev1.PodSpec{}
	for _, o := range objs["Deployment"] {
		d := o.(*appsv1.Deployment)
		out[d.Name] = d.Spec.Template.Spec
	}
	for _, o := range objs["StatefulSet"] {
		s := o.(*appsv1.StatefulSet)
		out[s.Name] = s.Spec.Template.Spec
	}
	return out
}

func TestKustomizeBaseBuildsValidObjects(t *testing.T) {
	t.Parallel()
	objs := objects(t, "deploy/k8s/base")
	pods := podSpecs(objs)
	require.Len(t, pods, 3)
	for name, spec := range pods {
		require.NotNil(t, spec.TerminationGracePeriodSeconds, name)
		require.GreaterOrEqual(t, *spec.TerminationGracePeriodSeconds, int64(30), "%s: longer than the drain timeouts", name)
		require.Len(t, spec.Containers, 1)
		c := spec.Containers[0]
		require.NotNil(t, c.LivenessProbe, name)
		require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path, name)
		require.NotNil(t, c.ReadinessProbe, name)
		require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path, name)
		require.False(t, c.Resources.Requests.Cpu().IsZero(), "%s has no CPU request", name)
		sc := c.SecurityContext
		require.True(t, *sc.RunAsNonRoot && !*sc.AllowPrivilegeEscalation && *sc.ReadOnlyRootFilesystem, name)
		require.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, name)
		var vars []string
		for _, e := range c.Env {
			vars = append(vars, e.Name)
			require.False(t, strings.Contains(e.Name, "KEY") && e.Value != "", "%s: secret %s inline", name, e.Name)
		}
		requireKnown(t, "deploy/k8s/base "+name, vars)
		require.Equal(t, "braid-secrets", c.EnvFrom[1].SecretRef.Name, name)
	}
	orch := objs["StatefulSet"][0].(*appsv1.StatefulSet)
	var id *corev1.EnvVar
	for i, e := range orch.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "BRAID_ORCHESTRATOR_ID" {
			id = &orch.Spec.Template.Spec.Containers[0].Env[i]
		}
	}
	require.NotNil(t, id, "orchestrators run under their pod's stable name")
	require.Equal(t, "metadata.name", id.ValueFrom.FieldRef.FieldPath)
	hpa := objs["HorizontalPodAutoscaler"][0].(*autoscalingv2.HorizontalPodAutoscaler)
	require.Equal(t, "braid-worker", hpa.Spec.ScaleTargetRef.Name)
	require.Len(t, objs["PodDisruptionBudget"], 3)
	var cm *corev1.ConfigMap
	for _, o := range objs["ConfigMap"] {
		cm = o.(*corev1.ConfigMap)
	}
	var keys []string
	for k := range cm.Data {
		keys = append(keys, k)
	}
	requireKnown(t, "deploy/k8s/base braid-config", keys)
}

func TestKustomizeOverlayPointsAtExistingInfrastructure(t *testing.T) {
	t.Parallel()
	objs := objects(t, "deploy/k8s/overlays/external")
	for kind, list := range objs {
		for _, o := range list {
			if kind == "Namespace" {
				continue
			}
			b, _ := json.Marshal(o)
			require.Contains(t, string(b), `"namespace":"braid"`, kind)
		}
	}
	for name, spec := range podSpecs(objs) {
		require.True(t, strings.HasPrefix(spec.Containers[0].Image, "registry.example.com/braid/"), "%s: %s", name, spec.Containers[0].Image)
	}
	cm := objs["ConfigMap"][0].(*corev1.ConfigMap)
	require.Contains(t, cm.Data["BRAID_KAFKA_BROKERS"], "kafka-0.kafka.messaging.svc:9092")
}

// TestKustomizePodsAreScraped: every pod template asks an annotation-based
// Prometheus to scrape /metrics on the port its service serves it on.
func TestKustomizePodsAreScraped(t *testing.T) {
	t.Parallel()
	objs := objects(t, "deploy/k8s/base")
	templates := map[string]corev1.PodTemplateSpec{}
	for _, o := range objs["Deployment"] {
		d := o.(*appsv1.Deployment)
		templates[d.Name] = d.Spec.Template
	}
	for _, o := range objs["StatefulSet"] {
		s := o.(*appsv1.StatefulSet)
		templates[s.Name] = s.Spec.Template
	}
	require.Len(t, templates, 3)
	for name, tpl := range templates {
		a := tpl.Annotations
		require.Equal(t, "true", a["prometheus.io/scrape"], name)
		require.Equal(t, "/metrics", a["prometheus.io/path"], name)
		var port int32
		for _, p := range tpl.Spec.Containers[0].Ports {
			if p.Name == "http" {
				port = p.ContainerPort
			}
		}
		require.NotZero(t, port, "%s has no http port", name)
		require.Equal(t, strconv.Itoa(int(port)), a["prometheus.io/port"], "%s: scraped on the port that serves /metrics", name)
	}
}
