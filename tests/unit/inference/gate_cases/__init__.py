"""Public placements for the gate: credentials written the way people write them, and real values that
must survive whole. Written from the classes in issue 40 (DSNs, tool flags, nested pairs, config text,
short names, disguised names, prose, webhook paths, percent-encoding), not from any held-out case.

Each canary is ``(class, field, value, secret)``: ``secret`` must not survive the gate anywhere."""

from __future__ import annotations

from typing import Final

S: Final = "Qz7mapleRiver"  # a human-chosen password: words and digits, no entropy to speak of

CANARIES: Final[list[tuple[str, str, str, str]]] = [
    # DSNs and connection strings
    ("dsn", "dataSource", f"appuser:{S}@tcp(mysql.db.svc:3306)/orders?parseTime=true", S),
    ("dsn", "connect", f"scott/{S}@//oracle.db.svc:1521/ORCLPDB1", S),
    ("dsn", "connect", f"scott/{S}@orcl", S),
    ("dsn", "url", f"postgres://app:{S}@pg.db.svc:5432/app", S),
    ("dsn", "url", f"amqp://guest:p@ss{S}@rabbit:5672/", S),
    ("dsn", "url", f"redis://:{S}/x#y@redis-master:6379/0", S),
    ("dsn", "url", f"mongodb+srv://admin:{S}%40@cluster0.mongodb.net/db", S),
    # passwords passed to well-known tools
    ("tool", "command", f"sshpass -p {S} ssh deploy@bastion uptime", S),
    ("tool", "command", f"docker login -u ci -p {S} registry.example.com", S),
    ("tool", "command", f"mysql -h db -u root -p'{S}' orders", S),
    ("tool", "command", f'mysql -uroot -p"{S}" -e "select 1"', S),
    ("tool", "command", f"redis-cli -h redis -a {S} ping", S),
    ("tool", "command", f"ldapsearch -x -D cn=admin,dc=example,dc=org -w {S} -b dc=example,dc=org", S),
    ("tool", "command", f"curl -fsS -u admin:{S} https://grafana/api/health", S),
    ("tool", "command", f"keytool -importcert -keystore ks.jks -storepass {S} -noprompt", S),
    ("tool", "command", f"openssl pkcs12 -export -in c.pem -passout pass:{S} -out c.p12", S),
    ("tool", "command", f"echo 'deploy:{S}' | chpasswd", S),
    ("tool", "command", f"htpasswd -b -c /etc/nginx/.htpasswd admin {S}", S),
    ("tool", "command", f"sqlcmd -S db -U sa -P {S} -Q 'select 1'", S),
    ("tool", "command", f"mongosh mongodb://db:27017 -u root -p {S}", S),
    # NAME=value inside another flag
    ("nested", "args", f"--from-literal=password={S}", S),
    ("nested", "env", f"-Xmx512m -Djavax.net.ssl.keyStorePassword={S} -Dfoo=bar", S),
    ("nested", "args", f"--set auth.rootPassword={S}", S),
    # config text embedded in a string
    ("config", "redisConf", f"bind 0.0.0.0\nrequirepass {S}\nmaxmemory 256mb", S),
    ("config", "pgpass", f"pg.db.svc:5432:app:appuser:{S}", S),
    ("config", "netrc", f"machine github.com login ci password {S}", S),
    ("config", "initSql", f"CREATE USER 'app'@'%' IDENTIFIED BY '{S}';", S),
    ("config", "settingsXml", f"<server><id>nexus</id><username>ci</username><password>{S}</password></server>", S),
    ("config", "props", f"db.url=jdbc:postgresql://pg/app\ndb.password={S}\n", S),
    ("config", "dotenv", f"APP_ENV=prod\nSMTP_PASS={S}\n", S),
    ("config", "yamlish", f"database:\n  user: app\n  password: {S}\n  - broken: [", S),
    # short credential-ish keys and labels (by name)
    ("name", "auth", S, S),
    ("name", "cred", S, S),
    ("name", "psk", S, S),
    ("name", "bindpw", S, S),
    ("name", "community", S, S),
    ("name", "dbpass", S, S),
    ("name", "apiKeys", S, S),
    ("name", "DBPASS", S, S),
    ("name", "PassWord", S, S),
    # credential names in disguise
    ("disguised", "pass\u200bword", S, S),
    ("disguised", "pass\u00adword", S, S),
    ("disguised", "p\u0430ssword", S, S),  # Cyrillic a
    ("disguised", "tok\u0435n", S, S),  # Cyrillic e
    # prose
    ("prose", "description", f"Default login admin / {S} (change after install)", S),
    ("prose", "description", f"Das Passwort lautet {S}.", S),
    ("prose", "notes", f"The password is {S} for the staging db", S),
    ("prose", "notes", f"Le mot de passe est {S}", S),
    # webhook URLs whose secret is a path segment, percent-encoded tokens
    ("webhook", "endpoint", f"https://hooks.example.com/services/T000/B000/{S}xyz", S),
    ("webhook", "target", f"https://outlook.office.com/webhookb2/{S}@tenant/IncomingWebhook/abc/def", S),
    ("webhook", "notify", f"https://mattermost.example.com/hooks/{S}", S),
    ("percent", "callback", f"https://api.example.com/cb?x=1&token%3D{S}", S),
    ("percent", "callback", f"https://api.example.com/cb?access_token={S}%21", S),
    # a chosen password under a name that says nothing
    ("neutral", "note", S, S),
    ("neutral", "initial", "Sommer2024", "Sommer2024"),
    ("neutral", "admin", "hunter2!x", "hunter2!x"),
    ("neutral", "command", "bootstrap --admin Sommer2025 --port 8080", "Sommer2025"),
    ("neutral", "args", "--initial=Winter2026!", "Winter2026!"),
    ("neutral", "dotenv", "APP_MODE=prod\nBOOTSTRAP_ADMIN=Herbst2027", "Herbst2027"),
]

#: Real values that must survive the gate whole: ``(field, value)``.
KEEP: Final[list[tuple[str, str]]] = [
    ("image", "ghcr.io/acme/payments@sha256:4c1e2b3a5d6f7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f1e2d"),
    (
        "image",
        "registry.k8s.io/ingress-nginx/controller:v1.11.2@sha256:d5f8217feeac4887cb1ed21f27c2674e58be06bd8f5184cacea2a69abaf78dce",
    ),
    ("revision", "9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("git-sha", "9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("kmsKeyId", "arn:aws:kms:eu-west-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"),
    ("roleArn", "arn:aws:iam::123456789012:role/payments-irsa"),
    (
        "resourceId",
        "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/resourceGroups/prod-rg/providers/Microsoft.KeyVault/vaults/payments-kv",
    ),
    ("requestId", "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    ("checksum/config", "8d2f3c0e1b4a5d6c7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d"),
    ("controller-uid", "5f2c1e7a-9b3d-4c8e-a1f0-6d7b8c9e0f1a"),
    ("batch.kubernetes.io/controller-uid", "5f2c1e7a-9b3d-4c8e-a1f0-6d7b8c9e0f1a"),
    ("pod-template-hash", "5cb4d8b4b4"),
    ("controller-revision-hash", "web-6d8f9c7b5d"),
    ("schedule", "*/5 * * * *"),
    ("memory", "512Mi"),
    ("timeout", "1h30m"),
    ("host", "payments.prod.example.com"),
    ("url", "https://payments.prod.example.com/api/v2/health?verbose=true"),
    ("description", "Stores the nightly backups of the payments database in a versioned bucket."),
    ("description", "Password rotation is handled by Vault; see the runbook."),
    ("command", "nginx -g 'daemon off;'"),
    ("command", "redis-server --port 6379 --appendonly yes"),
    ("command", "mysql -h db -u root -P 3306 orders"),
    ("args", "--metrics-bind-address=:8080"),
    ("version", "v1.29.3-eks-ae9a62a"),
    ("ssh", "ssh://git@github.com/acme/deploy.git"),
    ("endpoint", "https://hooks.slack.com"),
    ("path", "/var/run/secrets/kubernetes.io/serviceaccount/token"),
    ("secretName", "payments-db-credentials"),
    ("npm", "https://registry.npmjs.org/@acme/ui"),
    ("description", "Login page / dashboard for the admin user"),
    ("command", "cd /app && pwd && ls"),
    ("clientAuth", "RequireAndVerifyClientCert"),
    ("docs", "https://example.com/webhooks/setup"),
    ("capacity", "100%"),
    ("osImage", "Ubuntu2204"),
    ("runtime", "NodeJS18"),
    ("sku", "Standard_D2s_v3"),
    ("instanceType", "m5.xlarge"),
    ("feature", "EnableHTTP2"),
    ("zone", "eu-west-1a"),
    ("storageClass", "gp3-Encrypted2"),
    ("note", "Deploy on Fridays only after the 3pm freeze"),
    ("mode", "ReadWriteOnce"),
    ("command", "server --image Ubuntu2204 --feature EnableHTTP2 --replicas 3"),
    ("env", "RUNTIME=NodeJS18 LOG_LEVEL=Debug"),
]
