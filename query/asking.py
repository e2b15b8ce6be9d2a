"""The shapes of a question: whether it asks about trouble, where it places itself, and which way a
relation it asks about points (what the named object uses, what uses it, or a value it holds).

Read by :mod:`kubevec.query.intent`; regular expressions over the question as asked.
"""

from __future__ import annotations

import re
from typing import Final

#: Words of a question about trouble.
TROUBLE: Final = re.compile(
    r"\b(crash\w*|fail\w*|broken|error\w*|unhealthy|not ready|isn'?t ready|oom\w*|out of memory|can'?t|cannot|"
    r"won'?t|unable|stuck|backoff|back-off|restart\w*|evict\w*|killed|down|degraded|refus\w*|denied|forbidden|"
    r"exceed\w*|wrong|problem\w*|issue\w*|pull|pending|unschedul\w*|unavailable|time[sd]? ?out|"
    r"no endpoints?|(?:not|never|isn'?t|aren'?t|doesn'?t|don'?t) (?:be |become |becomes |get |gets )?"
    r"(?:healthy|ready|work|running|run|start|respond|scheduled|bound|bind|available|serv|scal|up|reachable|creat)\w*|"
    r"not found|(?:does|do|did)(?: not|n'?t) exist|missing|warnings?)\b",
    re.IGNORECASE,
)
#: "in the prod namespace", "in namespace prod", "in the 'prod' namespace", "in prod ns": a namespace as the
#: question's place.
IN_NAMESPACE: Final = re.compile(
    r"\bin (?:the )?(?:namespace|ns) ['\"`]?([a-z0-9][a-z0-9-]*)|\bin (?:the )?['\"`]?([a-z0-9][a-z0-9-]*)['\"`]? (?:namespace|ns)\b"
)
#: "which services call the books API", "who talks to redis", "what uses the app-config map": the question
#: asks for what points at the object it names (the subject of a relation verb whose object is named),
#: not for that object; "which database does the orders service use" asks the other way (an auxiliary
#: before the verb puts the named object first).
ASKS_FOR_CALLERS: Final = re.compile(
    r"(?:^\W*(?:which|what|who|list|show|find)\b(?:(?!\b(?:does|do|did|is|are|was|were|will|can)\b)[^?])*?"
    r"|^\W*(?:which|what)\b[^?]*?\b(?:that|who)\s+)"  # or a relative clause: "which workload is the UI that calls X"
    r"\b(?:calls?|calling|talks? to|talking to|uses?|using|depends? on|connects? to|reads?|reading|loads?|writes? to|queries|"
    r"hits|mounts?|references?|points? (?:at|to)|(?:sends?|forwards?|push(?:es)?|reports?|exports?|routes?) "
    r"(?:\w+ ){0,3}to)\b",
    re.IGNORECASE,
)
#: "which database does the order service use", "what does the books service call", "what store does the
#: checkout service keep its state in", "where does the frontend send uploads", "the configmap
#: mounted by the users database": the question asks for what the object it names points at (the
#: object of a relation verb after an auxiliary, or the subject of a passive "by"), not for that object.
ASKS_FOR_CALLEES: Final = re.compile(
    r"^\W*(?:which|what|list|show|find)\b[^?]*?\b(?:does|do|did|will|can)\b[^?]*?"
    r"\b(?:call|talk to|use|depend on|connect to|read from|read|load|write to|query|hit|mount|reference|need|point at|"
    r"(?:send|forward|push|report|export|route) (?:\w+ ){0,3}to|(?:keep|store|persist|save|cache) (?:\w+ ){0,3}(?:in|to))"
    r"\b|\b(?:used|called|mounted|read|referenced|needed|queried) by\b"
    r"|^\W*where\b[^?]*?\b(?:does|do|did|will|can)\b[^?]*?"
    r"\b(?:send|store|keep|write|push|forward|export|report|persist|save|cache|get|read|connect)\b",
    re.IGNORECASE,
)
#: "find the rate limit service, the store it depends on", "the database it is configured to use", "the queue it
#: publishes to", "and what it depends on": a relative clause whose subject is a pronoun asks for what the
#: object named before it points at, beside that object (both are wanted: an agent's task, not a question).
ASKS_ALSO_FOR_CALLEES: Final = re.compile(
    r"\b(?:it|they)\s+(?:(?:is|are)\s+(?:\w+\s+)?to\s+|(?:should|must|would|will|can|tries to|try to|needs? to|"
    r"is supposed to|are supposed to)\s+)?"
    r"(?:calls?|talks? to|uses?|depends? on|connects? to|reads?(?: from)?|writes? to|reach(?:es)?|queries|mounts?|"
    r"needs?|requires?|loads?|consumes?|"
    r"(?:sends?|forwards?|publish(?:es)?|push(?:es)?|reports?|exports?|routes?|proxies|proxy) (?:\w+ ){0,2}to|"
    r"(?:keeps?|stores?|persists?|saves?|caches?) (?:\w+ ){0,2}(?:in|to))\b",
    re.IGNORECASE,
)
#: "find the object that holds the Kafka settings and the workloads that load it", "which ConfigMap provides
#: zoo.cfg, and which workload mounts it", "and what depends on it": a relation verb whose object is a pronoun
#: asks, beside what the question finds first (what "it" stands for), for what points at that.
ASKS_ALSO_FOR_CALLERS: Final = re.compile(
    r"\b(?:(?P<calls>calls?|connects? to|talks? to|queries|reach(?:es)?)|(?P<loads>reads?|loads?|consumes?|imports?)|(?P<mounts>mounts?)|"
    r"uses?|depends? on|references?|needs?)\s+(?:it|them)\b(?!\s+(?:to|for|as)\b)",
    re.IGNORECASE,
)
#: What "it" can stand for after each group of :data:`ASKS_ALSO_FOR_CALLERS`' verbs: what is called is a
#: Service; what is loaded or read holds settings, what is mounted a volume too (none: anything may be used).
POINTED_AT_BY: Final = {
    "calls": frozenset({"Service"}),
    "loads": frozenset({"ConfigMap", "Secret"}),
    "mounts": frozenset({"ConfigMap", "Secret", "PersistentVolumeClaim"}),
}


def pointed_kinds(question: str) -> frozenset[str]:
    """The kinds the "it" of a question asking for what points at it can be (empty: any)."""
    found = ASKS_ALSO_FOR_CALLERS.search(question)
    group = found.lastgroup if found is not None else None
    return POINTED_AT_BY.get(group or "", frozenset())


#: "what address does the cartservice use for redis", "the Redis address used by the rate limiter", "what
#: image does the inference deployment use": the question asks for a value the named object holds (in its
#: env, its args, its containers), not for what it points at.
ASKS_FOR_VALUE: Final = re.compile(
    r"^\W*(?:which|what)\s+(?:\w+\s+){0,2}(?:address(?:es)?|urls?|uris?|endpoints?|host(?:name)?s?|ports?|paths?|"
    r"connection strings?|images?|versions?|tags?|commands?|arguments|args|flags)\s+(?:of\s+[^?]*?)?(?:does|do|did|will|can)\b"
    r"|\b(?:address(?:es)?|urls?|uris?|endpoints?|host(?:name)?s?|ports?|connection strings?) (?:used|read) by\b",
    re.IGNORECASE,
)


#: "what scales the inference server", "what limits evictions of the MySQL pods", "who owns the orders
#: claim": the question asks for the subject of a verb (the word after "what" ends as a verb in the third
#: person does, not in "ss" as "headless" does, and no auxiliary follows it, so it is no noun: "what limits
#: does X have"); the kinds it names after the verb are what the answer acts on, not what it is
#: (:mod:`kubevec.query.subjects` reads the rest).
#: A verb in the third person that no auxiliary follows (the group: the verb), shared with
#: :data:`kubevec.query.subjects.ASKS_FOR_NOUN_SUBJECT`.
VERB_S: Final = (
    r"(?!(?:is|was|has|does|goes)\b)([a-z]{2,}[^s\W]s)\b"
    r"(?!\s+(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|may|must|run|runs|exist)\b)"
)
ASKS_FOR_SUBJECT: Final = re.compile(r"^\W*(?:what|which|who)\s+" + VERB_S, re.IGNORECASE)


def without_place(question: str) -> str:
    """The question without the namespace it places itself in ("... in the calculator namespace"): the
    words that rank documents by their topic. A place is where to look, not what: every object there
    says its namespace, and one whose image or name repeats it (``distributed-calculator-go``) would win
    a word ranking on it."""
    rest = IN_NAMESPACE.sub(" ", question.lower())
    return " ".join(rest.split()) or question


def place_of(question: str) -> str | None:
    """The one namespace the question places itself in ("pods in namespace prod"), None for none or several."""
    found = {m.group(1) or m.group(2) for m in IN_NAMESPACE.finditer(question.lower())}
    return found.pop() if len(found) == 1 else None


#: Words for what only a Pod template holds ("which image does the claims service run", "the bank service
#: container", "its env variables", "what fsGroup ...", "the memory limit of the carts service"): the answer
#: is a workload (or its Pods), whatever else the question names (the Service of the program, its claim).
ASKS_FOR_TEMPLATE: Final = re.compile(
    r"\b(?:images?|containers?(?! ports?)|env|environment|variables?|commands?|args|arguments|probes?|liveness|readiness|"
    r"fsgroup|runasuser|security ?context|restarts?|restarted|tolerat\w*|sidecars?|runs? (?:with|as|under)|"
    r"(?:memory|mem|cpu) (?:limits?|requests?|requested)|(?:limits?|requests?) (?:of|for|on) (?:memory|cpu)|"
    r"resource (?:limits?|requests?)|how much (?:memory|cpu))\b",
    re.IGNORECASE,
)
#: Words for what only a Service has ("on which node port", "is it headless", "the load balancer", "LB",
#: "internal only (ClusterIP)", "which port maps to 53", "exposed outside the cluster"): the answer is a
#: Service, whatever else the question names (the workload behind it, named alike).
ASKS_FOR_SERVICE: Final = re.compile(
    r"(?<![-\w])(?:node ?ports?|headless|load ?balancers?|lbs?|cluster ?ips?|external ?ips?|target ?ports?|internal only|"
    r"ports? (?:[\w-]+ ){0,4}maps? to|exposed? (?:\w+ ){0,3}(?:outside|externally|internally|to the internet))(?![-\w])",
    re.IGNORECASE,
)
#: A question about what is let through or kept out: which rules allow, block or restrict traffic
#: ("which pods may connect to the shop database", "is anything blocking it", "who is allowed to reach the
#: cards pods").
ASKS_WHAT_LETS_THROUGH: Final = re.compile(
    r"\b(?:allow(?:s|ed|ing)?(?! to use)|permit(?:s|ted)?|den(?:y|ies|ied)|block(?:s|ed|ing)?|drop(?:s|ped)?|"
    r"restrict(?:s|ed|ing|ions?)?|admits?|admitted|isolat\w+|lock(?:s|ed)? down|lockdown|"
    r"may (?:connect|reach|call|talk|access|send))\b",
    re.IGNORECASE,
)
#: A question about what an identity may do in the API ("what lets the init container label its own pod",
#: "which role lets the fights account read jobs", "which RBAC objects let the services discover endpoints").
ASKS_WHAT_MAY_DO: Final = re.compile(
    r"\b(?:lets?|allows?|permits?|may|can)\b(?:\s+\S+){0,5}?\s+(?:read|list|get|watch|create|delete|patch|update|"
    r"label|discover|do)\b|\b(?:permissions?|privileges?|rights)\b|\brbac (?:objects?|rules?|resources?|roles?|bindings?)\b",
    re.IGNORECASE,
)
#: A question about evicting Pods ("why can't I drain the node", "how many may be evicted at once").
ASKS_WHAT_EVICTS: Final = re.compile(r"\b(?:drain\w*|evict\w*|disruptions?)\b", re.IGNORECASE)
