"""The gate's vocabulary: the words that make a field name hold, point at, identify or describe a credential.

Data only, apart from the rules that read it (:mod:`.names`, :mod:`.generated`, :mod:`.gate`), so that
adding a word (a new language, a new reference suffix) is a reviewable one-line change that cannot
alter how any rule works. Words are lowercase and whole: the names are split into words first.
"""

from __future__ import annotations

from typing import Final

REDACTED: Final = "<redacted>"
LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
#: Annotations that carry whole object copies or credentials, dropped whatever their value.
DROPPED_ANNOTATIONS: Final = frozenset(
    {
        LAST_APPLIED,
        "kubernetes.io/service-account.uid",
        "openshift.io/token-secret.value",
        "deployment.kubernetes.io/revision",  # churns on every rollout; says nothing
    }
)

#: A field name containing one of these words holds a credential.
CREDENTIAL_WORDS: Final = frozenset(
    {
        "password",
        "passwords",
        "passwd",
        "passphrase",
        "passcode",
        "pwd",
        "secret",
        "secrets",
        "token",
        "tokens",
        "credential",
        "credentials",
        "creds",
        "dsn",
        "jwt",
        "bearer",
        "authorization",
        "kubeconfig",
        "apikey",
        "apikeys",
        "accesskey",
        "secretkey",
        "privatekey",
        "authtoken",
        "connectionstring",
        "connstr",
        "salt",
        "htpasswd",
        "psk",
        "bindpw",
        "bindpassword",
        "dbpass",
        "requirepass",
        "masterauth",
    }
)
#: A field name whose *last* word is one of these short forms holds a credential (``dbPass``, ``rootPw``);
#: elsewhere in a name they mean something else (``passThrough``).
CREDENTIAL_LAST_WORDS: Final = frozenset(
    {"pass", "pw", "pword", "pin", "otp", "totp", "hotp", "cred", "creds", "community", "psk", "mnemonic"}
)
#: Run together in one word (``DBPASS``, ``rootpw``, ``PassWord``): a name ending in these holds a credential,
#: but for the English words that end so.
CREDENTIAL_RUN_ENDINGS: Final = ("pass", "passwd", "pwd", "pw", "password", "passphrase", "secret", "token")
NOT_CREDENTIAL_RUNS: Final = frozenset(
    {"bypass", "compass", "encompass", "overpass", "underpass", "trespass", "surpass", "impass", "multipass",
     "onepass", "firstpass", "secondpass", "subpass", "renderpass", "highpass", "lowpass", "bandpass"}
)  # fmt: skip
#: One unbroken word ending in one of these holds a credential (``PGPASSWORD``, ``csrftoken``).
CREDENTIAL_SUFFIXES: Final = ("password", "passwd", "passphrase", "secret", "token", "apikey")
#: A field name containing these adjacent words holds a credential (``secretAccessKey``, ``api_key``).
CREDENTIAL_PHRASES: Final = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("private", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("session", "key"),
        ("account", "key"),
        ("shared", "key"),
        ("license", "key"),
        ("client", "key"),
        ("tls", "key"),
        ("ssh", "key"),
        ("cert", "key"),
        ("auth", "key"),
        ("hmac", "key"),
        ("connection", "string"),
        ("conn", "string"),
        ("basic", "auth"),
        ("webhook", "url"),
        ("sas", "url"),
        ("otp", "seed"),
        ("totp", "seed"),
        ("mfa", "seed"),
        ("recovery", "code"),
        ("recovery", "codes"),
        ("backup", "codes"),
    }
)
#: A field name that *ends* in these adjacent words holds a credential (``break-glass``, ``seedPhrase``); elsewhere
#: in a name they say what something else is for (``breakGlassRole``, ``breakGlassSecretName``).
CREDENTIAL_LAST_PHRASES: Final = frozenset({("break", "glass"), ("seed", "phrase"), ("recovery", "phrase")})
#: A name that starts with one of these states a fact about a credential (``has-secret``,
#: ``enableBasicAuth``, ``createToken``): a yes/no value under it is kept, anything else is not.
PREDICATE_WORDS: Final = frozenset(
    {"has", "is", "enable", "enabled", "disable", "use", "uses", "with", "without", "no", "skip", "allow",
     "require", "requires", "create", "generate", "rotate", "auto", "inject", "sync", "manage", "mount"}
)  # fmt: skip
#: Values that answer yes or no: never a credential, whatever the name.
YES_NO: Final = frozenset({"true", "false", "yes", "no", "on", "off", "enabled", "disabled", "none", "null"})
#: A field name whose *last* word is one of these refers to a credential rather than holding it.
REFERENCE_WORDS: Final = frozenset(
    {
        "name",
        "names",
        "ref",
        "refs",
        "reference",
        "selector",
        "namespace",
        "path",
        "file",
        "filename",
        "dir",
        "mount",
        "kind",
        "type",
        "mode",
        "length",
        "size",
        "ttl",
        "duration",
        "period",
        "lifetime",
        "expiry",
        "expiration",
        "expires",
        "enabled",
        "disabled",
        "required",
        "policy",
        "format",
        "algorithm",
        "version",
        "field",
        "header",
        "source",
        "provider",
        "store",
        "template",
        "rotation",
        "strategy",
        "url",
        "uri",
        "endpoint",
        "audience",
        "issuer",
        "scope",
        "scopes",
    }
)
#: Weaker hints: a long high-entropy string under a name with one of these words is dropped.
SUSPICIOUS_WORDS: Final = frozenset(
    {
        "key",
        "keys",
        "auth",
        "cert",
        "signature",
        "sig",
        "hmac",
        "hash",
        "seed",
        "nonce",
        "cookie",
        "session",
        "license",
        "webhook",
        "private",
        "access",
        "client",
        "sas",
        "otp",
    }
)
ENTROPY_MIN_LENGTH: Final = 16
ENTROPY_MIN_BITS: Final = 3.5

#: Credential words in other languages, accents removed (``contraseña`` -> ``contrasena``), matched as
#: whole words or as a name's words run together (``motDePasse`` -> ``motdepasse``).
FOREIGN_CREDENTIAL_WORDS: Final = frozenset(
    {
        "passwort", "kennwort", "geheimnis", "zugangsdaten",  # German
        "motdepasse", "mdp", "jeton", "identifiants",  # French
        "contrasena", "clave", "secreto", "credenciales",  # Spanish
        "senha", "segredo", "credenciais",  # Portuguese
        "segreto", "credenziali", "parola", "parolachiave",  # Italian (parola d'ordine), Romanian, Turkish
        "wachtwoord", "geheim",  # Dutch
        "haslo", "heslo", "lozinka", "geslo", "jelszo", "sifre", "parolasi",  # Polish, Czech, Croatian, ...
        "salasana", "losenord", "passord", "adgangskode", "lykilord",  # Nordic
        "katasandi", "sandi", "matkhau",  # Indonesian, Vietnamese
    }
)  # fmt: skip
#: Credential words in scripts without case, matched anywhere in a name (``数据库密码``).
FOREIGN_CREDENTIAL_PARTS: Final = (
    "пароль", "секрет", "токен", "ключапи", "апиключ",  # Russian, Ukrainian
    "密码", "密碼", "口令", "密钥", "密鑰", "令牌", "秘钥",  # Chinese
    "パスワード", "暗証番号", "秘密鍵", "トークン", "シークレット",  # Japanese
    "비밀번호", "암호", "토큰", "비밀키",  # Korean
    "كلمةالمرور", "كلمةالسر", "رمزالدخول",  # Arabic
    "סיסמה", "סיסמא",  # Hebrew
    "पासवर्ड", "गुप्तशब्द",  # Hindi
    "รหัสผ่าน",  # Thai
    "κωδικός", "συνθηματικό",  # Greek
)  # fmt: skip
#: A field whose name ends in one of these words holds an identifier, not a credential: a UUID or a
#: hex id under it (a commit SHA, a checksum) is kept by the deny-by-default rule.
IDENTIFYING_WORDS: Final = frozenset(
    {
        "uid", "uuid", "id", "ids", "sha", "commit", "revision", "rev", "digest", "hash", "checksum", "etag",
        "fingerprint", "version", "generation", "ref", "build", "image", "imageid", "trace", "span", "request",
        "correlation", "contenthash", "texthash", "from",
    }
)  # fmt: skip


#: A value stands as itself, not as a secret, under a name whose last word says what kind of thing it is
#: (``osImage: Ubuntu2204``, ``runtime: NodeJS18``, ``sku: Standard2v3``) or that it identifies.
DESCRIPTIVE_WORDS: Final = frozenset(
    {"type", "types", "kind", "class", "size", "sku", "tier", "version", "versions", "family", "os", "image",
     "images", "runtime", "platform", "arch", "architecture", "flavor", "flavour", "edition", "distro",
     "distribution", "release", "mode", "name", "names", "region", "zone", "location", "model", "generation",
     "gen", "engine", "plan", "profile", "channel", "product", "format", "protocol", "level", "policy",
     "strategy", "provider", "instance", "machine", "series", "stage", "environment", "env", "cluster", "app",
     "component", "tag", "tags", "title", "label", "labels", "template", "category", "variant",
     "preset", "theme", "locale", "language", "codec", "algorithm", "cipher", "suite", "method", "role",
     "group", "team", "owner", "project", "account", "subscription", "tenant", "host", "hostname", "domain",
     "endpoint", "url", "uri", "path", "file", "dir", "ref", "revision", "branch", "commit", "build"}
)  # fmt: skip
