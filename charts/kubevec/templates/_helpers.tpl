{{- define "kubevec.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kubevec.fullname" -}}
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

{{- define "kubevec.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kubevec.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubevec.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kubevec.labels" -}}
helm.sh/chart: {{ include "kubevec.chart" . }}
{{ include "kubevec.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "kubevec.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kubevec.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kubevec.metricsName" -}}
{{- printf "%s-metrics" (include "kubevec.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{/* The image reference: optional registry override, then digest over tag. */}}
{{- define "kubevec.image" -}}
{{- $repository := .Values.image.repository -}}
{{- with .Values.image.registry -}}
{{- $repository = printf "%s/%s" . (regexReplaceAll "^[^/]*[.:][^/]*/" $repository "") -}}
{{- end -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end }}

{{/* The cluster-scoped ClusterKopfPeering: named per release unless told otherwise. */}}
{{- define "kubevec.peeringName" -}}
{{- .Values.peering.name | default (include "kubevec.fullname" .) -}}
{{- end }}

{{- define "kubevec.mcpName" -}}
{{- printf "%s-mcp" (include "kubevec.fullname" . | trunc 59 | trimSuffix "-") }}
{{- end }}

{{/* Host headers the MCP server accepts: the Service's DNS names, ingress and route hostnames, allowedHosts. */}}
{{- define "kubevec.mcpAllowedHosts" -}}
{{- $svc := include "kubevec.mcpName" . -}}
{{- $names := list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) -}}
{{- if .Values.mcp.ingress.enabled }}{{ $names = concat $names .Values.mcp.ingress.hosts }}{{ end -}}
{{- if .Values.mcp.httpRoute.enabled }}{{ $names = concat $names .Values.mcp.httpRoute.hostnames }}{{ end -}}
{{- $hosts := list -}}
{{- range $names }}{{ $hosts = append (append $hosts .) (printf "%s:*" .) }}{{ end -}}
{{- concat $hosts .Values.mcp.allowedHosts | uniq | toJson -}}
{{- end }}
