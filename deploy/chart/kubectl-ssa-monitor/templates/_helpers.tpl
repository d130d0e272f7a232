{{/* The objects' name: the release's, or release-chart. */}}
{{- define "monitor.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The selector labels; the kustomize base (deploy/kustomize/base) uses the same. */}}
{{- define "monitor.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "monitor.labels" -}}
{{ include "monitor.selectorLabels" . }}
app.kubernetes.io/component: monitor
app.kubernetes.io/part-of: kubectl-ssa
{{- end -}}

{{- define "monitor.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "monitor.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "monitor.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}
