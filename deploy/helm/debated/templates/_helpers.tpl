{{/* Chart name, truncated to 63 characters (a DNS label). */}}
{{- define "debated.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: release-chart, or the release alone when it contains the chart name. */}}
{{- define "debated.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "debated.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "debated.selectorLabels" -}}
app.kubernetes.io/name: {{ include "debated.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The service pods' selector: the migration Job's pods must not match it. */}}
{{- define "debated.serverSelectorLabels" -}}
{{ include "debated.selectorLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{- define "debated.labels" -}}
helm.sh/chart: {{ include "debated.chart" . }}
{{ include "debated.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: debated
{{- end }}

{{- define "debated.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "debated.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "debated.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The Secret the pods read DEBATED_DATABASE_URL and the other secrets from ("" when none). */}}
{{- define "debated.secretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else if or .Values.secrets.databaseURL .Values.secrets.adminToken .Values.secrets.signingKeys .Values.secrets.checkpointKeys .Values.secrets.llmAPIKey }}
{{- include "debated.fullname" . }}
{{- end }}
{{- end }}

{{/* "true" when the migration Job is rendered: enabled, and a database is configured. */}}
{{- define "debated.migrationEnabled" -}}
{{- if and .Values.migration.enabled (or .Values.migration.existingSecret .Values.migration.databaseURL .Values.secrets.existingSecret .Values.secrets.databaseURL) -}}
true
{{- end }}
{{- end }}

{{/* The secret environment variables: always through secretKeyRef, never inline. */}}
{{- define "debated.secretEnv" -}}
{{- $secret := include "debated.secretName" . }}
{{- if $secret }}
{{- range $name := list "DEBATED_DATABASE_URL" "DEBATED_ADMIN_TOKEN" "DEBATED_SIGNING_KEYS" "DEBATED_CHECKPOINT_KEYS" "DEBATED_LLM_API_KEY" }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $name }}
      optional: true
{{- end }}
{{- end }}
{{- end }}
