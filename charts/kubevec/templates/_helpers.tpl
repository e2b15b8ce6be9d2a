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

{{/* Where the index is and how queries are embedded: the controller's and the standalone MCP server's. */}}
{{- define "kubevec.storeEnv" -}}
- {name: KUBEVEC_STORE__BACKEND, value: {{ .Values.store.backend | quote }}}
- {name: KUBEVEC_STORE__PATH, value: /data/store}
{{- with .Values.store.url }}
- {name: KUBEVEC_STORE__URL, value: {{ . | quote }}}
{{- end }}
{{- if eq .Values.store.backend "weaviate" }}
- {name: KUBEVEC_STORE__GRPC_PORT, value: {{ .Values.store.grpcPort | int | quote }}}
- {name: KUBEVEC_STORE__CONSISTENCY_LEVEL, value: {{ .Values.store.consistencyLevel | quote }}}
- {name: KUBEVEC_STORE__REPLICATION_FACTOR, value: {{ .Values.store.replicationFactor | int | quote }}}
{{- end }}
{{- with .Values.store.collectionPrefix }}
- {name: KUBEVEC_STORE__COLLECTION_PREFIX, value: {{ . | quote }}}
{{- end }}
{{- if eq .Values.store.backend "redis" }}
- {name: KUBEVEC_STORE__KEY_PREFIX, value: {{ .Values.store.keyPrefix | quote }}}
{{- end }}
{{- if .Values.store.apiKeySecret }}
- name: KUBEVEC_STORE__API_KEY
  valueFrom: {secretKeyRef: {name: {{ .Values.store.apiKeySecret | quote }}, key: {{ .Values.store.apiKeyKey | quote }}}}
{{- end }}
{{- if .Values.store.passwordSecret }}
- name: KUBEVEC_STORE__PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .Values.store.passwordSecret | quote }}, key: {{ .Values.store.passwordKey | quote }}}}
{{- end }}
{{- include "kubevec.modelEnv" . }}
{{- end }}

{{/* The embedder and the reranker: every KUBEVEC_EMBEDDER__* and KUBEVEC_RERANKER__* a value asks for. */}}
{{- define "kubevec.modelEnv" -}}
{{- $e := .Values.embedder }}
- {name: KUBEVEC_EMBEDDER__PROVIDER, value: {{ $e.provider | quote }}}
{{- with $e.model }}
- {name: KUBEVEC_EMBEDDER__MODEL, value: {{ . | quote }}}
{{- end }}
{{- with $e.baseUrl }}
- {name: KUBEVEC_EMBEDDER__BASE_URL, value: {{ . | quote }}}
{{- end }}
{{- if $e.apiKeySecret }}
- name: KUBEVEC_EMBEDDER__API_KEY
  valueFrom: {secretKeyRef: {name: {{ $e.apiKeySecret | quote }}, key: {{ $e.apiKeyKey | quote }}}}
{{- end }}
{{- if $e.headersSecret }}
- name: KUBEVEC_EMBEDDER__HEADERS
  valueFrom: {secretKeyRef: {name: {{ $e.headersSecret | quote }}, key: {{ $e.headersKey | quote }}}}
{{- end }}
{{- if gt (int $e.dimension) 0 }}
- {name: KUBEVEC_EMBEDDER__DIMENSION, value: {{ $e.dimension | quote }}}
{{- end }}
{{- if ne $e.encoding "float" }}
- {name: KUBEVEC_EMBEDDER__ENCODING, value: {{ $e.encoding | quote }}}
{{- end }}
{{- with $e.apiVersion }}
- {name: KUBEVEC_EMBEDDER__API_VERSION, value: {{ . | quote }}}
{{- end }}
{{- with $e.region }}
- {name: KUBEVEC_EMBEDDER__REGION, value: {{ . | quote }}}
{{- end }}
{{- with $e.queryPrefix }}
- {name: KUBEVEC_EMBEDDER__QUERY_PREFIX, value: {{ . | quote }}}
{{- end }}
{{- with $e.documentPrefix }}
- {name: KUBEVEC_EMBEDDER__DOCUMENT_PREFIX, value: {{ . | quote }}}
{{- end }}
{{- if gt (int $e.maxInputTokens) 0 }}
- {name: KUBEVEC_EMBEDDER__MAX_INPUT_TOKENS, value: {{ $e.maxInputTokens | quote }}}
{{- end }}
{{- if ne $e.provider "local" }}
- {name: KUBEVEC_EMBEDDER__TIMEOUT_SECONDS, value: {{ $e.timeoutSeconds | quote }}}
- {name: KUBEVEC_EMBEDDER__MAX_ATTEMPTS, value: {{ $e.maxAttempts | quote }}}
{{- end }}
{{- if $e.modelVolume }}
- {name: KUBEVEC_EMBEDDER__MODEL_DIR, value: {{ printf "/models/embedder/%s" $e.modelSubPath | trimSuffix "/" | quote }}}
- {name: KUBEVEC_EMBEDDER__MODEL_SHA256, value: {{ $e.modelSha256 | quote }}}
{{- end }}
{{- with $e.pooling }}
- {name: KUBEVEC_EMBEDDER__POOLING, value: {{ . | quote }}}
{{- end }}
- {name: KUBEVEC_EMBEDDER__THREADS, value: {{ $e.threads | quote }}}
- {name: KUBEVEC_EMBEDDER__BATCH_SIZE, value: {{ $e.batchSize | quote }}}
- {name: KUBEVEC_EMBEDDER__INT8_WEIGHTS, value: {{ $e.int8Weights | quote }}}
{{- $r := .Values.reranker }}
{{- if ne $r.provider "none" }}
- {name: KUBEVEC_RERANKER__PROVIDER, value: {{ $r.provider | quote }}}
{{- with $r.model }}
- {name: KUBEVEC_RERANKER__MODEL, value: {{ . | quote }}}
{{- end }}
{{- with $r.baseUrl }}
- {name: KUBEVEC_RERANKER__BASE_URL, value: {{ . | quote }}}
{{- end }}
{{- if $r.apiKeySecret }}
- name: KUBEVEC_RERANKER__API_KEY
  valueFrom: {secretKeyRef: {name: {{ $r.apiKeySecret | quote }}, key: {{ $r.apiKeyKey | quote }}}}
{{- end }}
- {name: KUBEVEC_RERANKER__CANDIDATES, value: {{ $r.candidates | quote }}}
- {name: KUBEVEC_RERANKER__TIMEOUT_SECONDS, value: {{ $r.timeoutSeconds | quote }}}
{{- if $r.modelVolume }}
- {name: KUBEVEC_RERANKER__MODEL_DIR, value: {{ printf "/models/reranker/%s" $r.modelSubPath | trimSuffix "/" | quote }}}
- {name: KUBEVEC_RERANKER__MODEL_SHA256, value: {{ $r.modelSha256 | quote }}}
{{- end }}
{{- end }}
{{- end }}

{{/* Model folders from volumes (embedder, reranker), read-only: mounts, then volumes. */}}
{{- define "kubevec.modelMounts" -}}
{{- if .Values.embedder.modelVolume }}
- {name: embedder-model, mountPath: /models/embedder, readOnly: true}
{{- end }}
{{- if .Values.reranker.modelVolume }}
- {name: reranker-model, mountPath: /models/reranker, readOnly: true}
{{- end }}
{{- end }}

{{- define "kubevec.modelVolumes" -}}
{{- with .Values.embedder.modelVolume }}
- name: embedder-model
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.reranker.modelVolume }}
- name: reranker-model
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Who may call the MCP endpoint and how sessions are bounded (the port is set by whoever serves it). */}}
{{- define "kubevec.mcpEnv" -}}
{{- if .Values.mcp.tokenSecret }}
- name: KUBEVEC_MCP_TOKEN
  valueFrom: {secretKeyRef: {name: {{ .Values.mcp.tokenSecret | quote }}, key: {{ .Values.mcp.tokenKey | quote }}}}
{{- end }}
{{- if .Values.mcp.kubernetesAuth }}
- {name: KUBEVEC_MCP_KUBERNETES_AUTH, value: "true"}
{{- with .Values.mcp.audiences }}
- {name: KUBEVEC_MCP_AUDIENCES, value: {{ toJson . | quote }}}
{{- end }}
{{- end }}
{{- with .Values.mcp.oidcIssuer }}
- {name: KUBEVEC_MCP_OIDC_ISSUER, value: {{ . | quote }}}
{{- end }}
{{- with .Values.mcp.resourceUrl }}
- {name: KUBEVEC_MCP_RESOURCE_URL, value: {{ . | quote }}}
{{- end }}
{{- if .Values.mcp.authentication.jwt }}
- {name: KUBEVEC_MCP_AUTHENTICATION_CONFIG, value: "/etc/kubevec/mcp-authentication/authentication-config.yaml"}
{{- end }}
{{- if .Values.mcp.tokensSecret }}
- {name: KUBEVEC_MCP_TOKENS_FILE, value: {{ printf "/etc/kubevec/mcp-tokens/%s" .Values.mcp.tokensKey | quote }}}
{{- end }}
- {name: KUBEVEC_MCP_AUTHORIZATION, value: {{ .Values.mcp.authorization | quote }}}
- {name: KUBEVEC_MCP_ACCESS_TTL_SECONDS, value: {{ .Values.mcp.accessTtlSeconds | quote }}}
- {name: KUBEVEC_MCP_REVIEWS_PER_SECOND, value: {{ .Values.mcp.reviewsPerSecond | quote }}}
- {name: KUBEVEC_MCP_REVIEWS_BURST, value: {{ .Values.mcp.reviewsBurst | quote }}}
- {name: KUBEVEC_MCP_REVIEW_MAX_WAIT_SECONDS, value: {{ .Values.mcp.reviewMaxWaitSeconds | quote }}}
- {name: KUBEVEC_MCP_SESSION_IDLE_SECONDS, value: {{ .Values.mcp.sessionIdleSeconds | quote }}}
{{- if .Values.mcp.auditQueries }}
- {name: KUBEVEC_MCP_AUDIT_QUERIES, value: "true"}
{{- end }}
- {name: KUBEVEC_MCP_MAX_SESSIONS, value: {{ .Values.mcp.maxSessions | quote }}}
{{- if lt (int .Values.mcp.callerSessions) (int .Values.mcp.maxSessions) }}
- {name: KUBEVEC_MCP_CALLER_SESSIONS, value: {{ .Values.mcp.callerSessions | quote }}}
{{- end }}
- {name: KUBEVEC_MCP_CALLER_IN_FLIGHT, value: {{ .Values.mcp.callerInFlight | quote }}}
- {name: KUBEVEC_MCP_MAX_IN_FLIGHT, value: {{ .Values.mcp.maxInFlight | quote }}}
- {name: KUBEVEC_MCP_CALLER_REQUESTS_PER_SECOND, value: {{ .Values.mcp.callerRequestsPerSecond | quote }}}
- {name: KUBEVEC_MCP_MAX_REQUESTS_PER_SECOND, value: {{ .Values.mcp.maxRequestsPerSecond | quote }}}
- {name: KUBEVEC_MCP_ALLOWED_HOSTS, value: {{ include "kubevec.mcpAllowedHosts" . | quote }}}
{{- with .Values.mcp.allowedOrigins }}
- {name: KUBEVEC_MCP_ALLOWED_ORIGINS, value: {{ toJson . | quote }}}
{{- end }}
{{- end }}

{{/* Whoever serves MCP asks the API server about its callers: Kubernetes tokens (TokenReview, then
SubjectAccessReviews) or identities of outside issuers (SubjectAccessReviews for the mapped user and groups).
"true" or empty. */}}
{{- define "kubevec.mcpReviews" -}}
{{- if or .Values.mcp.kubernetesAuth .Values.mcp.authentication.jwt }}true{{ end -}}
{{- end }}

{{- define "kubevec.mcpAuthenticationName" -}}
{{- printf "%s-mcp-authentication" (include "kubevec.fullname" . | trunc 44 | trimSuffix "-") }}
{{- end }}

{{/* The outside issuers as the API server's own AuthenticationConfiguration document. */}}
{{- define "kubevec.mcpAuthenticationConfig" -}}
{{- dict "apiVersion" "apiserver.config.k8s.io/v1" "kind" "AuthenticationConfiguration" "jwt" .Values.mcp.authentication.jwt | toYaml }}
{{- end }}

{{/* The pod annotation that rolls the pods serving MCP when the issuers change (the file is read at start). */}}
{{- define "kubevec.mcpAuthenticationChecksum" -}}
checksum/mcp-authentication: {{ include "kubevec.mcpAuthenticationConfig" . | sha256sum }}
{{- end }}

{{/* The standalone MCP server's pods: a name of their own, so the controller's selector never matches them. */}}
{{- define "kubevec.mcpSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-mcp" (include "kubevec.name" .) }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: mcp
{{- end }}
