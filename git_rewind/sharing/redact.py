"""What must not leave the machine: secrets in text, in transcripts, and files that hold them.

`push` sends a copy of the checkpoints; this module decides what that copy may not carry. Text
(messages, prompts, summaries, transcripts) keeps its shape and loses each secret value, which becomes
`[REDACTED:<kind>]`; files that look like secrets are named, with a reason, so the copy can leave them out.

The scanner is detect-secrets (imported only here, and only when something is scanned: it pulls in
`requests`). Its plugin classes are used directly, never its global settings, baselines or
`.secrets.baseline` files, and never a plugin's `verify` (which would send the secret over the network).
Plugins used: detect-secrets 1.5.0's detectors of known shapes (AWS, Azure storage, basic auth in URLs,
Cloudant, Discord, GitHub, GitLab, IBM, JWT, Mailchimp, npm, OpenAI, private keys, PyPI, SendGrid, Slack,
SoftLayer, Square, Stripe, Telegram, Twilio) and its keyword detector (`password = "…"`, quotes required
in text, its per-file-type rules in files, its own heuristics against false positives), plus
`_extra_detectors`, written as detect-secrets plugins, for shapes 1.5.0 misses: GitHub's fine-grained
`github_pat_`, OpenAI's `sk-proj-`/`sk-svcacct-`/`sk-admin-` and long (40+ characters) `sk-` keys
without the legacy `T3BlbkFJ` infix, Anthropic's `sk-ant-`, PKCS#8 encrypted and PuTTY v3 private keys,
and unquoted assignments to secret names (`DB_PASSWORD=value`; in text also `aws_secret_access_key =
wJalr…` and `?password=s3cret9&`). Matches are widened to the whole token (detect-secrets matches 24
characters of a 99-character Stripe key, a JWT without its signature) and private keys to the whole
block; a distinctive value found once goes everywhere it appears. Runs of base64 and hex are decoded and
what they hold scanned as text (`_encoded`); a path is scanned as text too (`secret_names`): a token in
a file's name keeps the file out of a push whatever it holds.

Decoding, measured with bench/redact_bench.py --decoding on the three corpus trees (4,972 files, 53.6 MB),
20,000 files of this machine's Python libraries, C headers and docs (354 MB) and 929 SVG images and source
maps (12.3 MB, `data:` URIs among them), changed no file's verdict: 0 false hits. It costs a quarter more
scanning time on the corpus trees (4.7 s to 5.8 s), two fifths on the system files (31.9 s to 45.5 s: HTML
and licence texts full of long words), once per blob (verdicts are cached).

Left out, measured with bench/redact_bench.py: on the agents' sample transcripts and this repository's
log (11,727 lines) the hex high-entropy detector fires 41 times, on agent ids, and on every quoted object
id (`"head": "3f78…"` has entropy 3.63, over its limit of 3.0): notes and transcripts are full of them;
the base64 one fires 6 times, on message and event ids (a `toolu_…` id scores 4.68, over 4.5); none was a
secret. `IPPublicDetector` finds addresses, which are not credentials. `ArtifactoryDetector` (`AP` and a
hex digit) took LLVM's `APFloat`/`APFixedPoint` headers for secrets, 2 of the 20,000 files of the file
benchmark. What is kept found one thing in that text, `"apiKey": "sk-mock-123"`, a key in form.

Each detector runs detect-secrets' own per-line scan on only the lines holding its trigger (`_TRIGGERS`: a
literal or a short expression every line it flags must contain, found by `str.find`, 10-100 times
cheaper than its patterns): tests/test_redact.py checks this finds what scanning every line finds.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import os
import re

from ..base.errors import RewindError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from ..base.repo import Repo

MARKER = "[REDACTED:{kind}]"
_MARKER_RE = re.compile(r"\[REDACTED:[^\]\n]*\]")

# Bumped when the rules change, so blob verdicts cached by an older scanner are not trusted.
SCANNER_VERSION = "2"
_CACHE_NAME = f"blob-scan-v{SCANNER_VERSION}.txt"
_BINARY_PROBE = 8000  # bytes: git's own test for a binary file (a NUL among the first 8000)
_BATCH_BYTES = 64 * 1024 * 1024  # blobs read per `cat-file --batch` call, at most (one blob may exceed it)

# Tokens a detector matched by their start (Stripe's 24 of 99 characters, a JWT without its
# signature): the whole token goes, up to the first character outside these.
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_\-.+/=]*")
_NO_TAIL = ("Secret Keyword", "Secret Assignment", "Basic Auth Credentials", "Private Key")


class Finding:
    """One secret replaced or one file left out: its kind (the detector's name) and where."""

    __slots__ = ("kind", "where")

    def __init__(self, kind: str, where: str) -> None:
        self.kind = kind
        self.where = where

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and (self.kind, self.where) == (other.kind, other.where)

    def __hash__(self) -> int:
        return hash((self.kind, self.where))

    def __repr__(self) -> str:
        return f"Finding({self.kind!r}, {self.where!r})"


# The detectors ----------------------------------------------------------------------------------


class _Detector:
    """One detect-secrets plugin as the scan drives it: its patterns with the groups that hold the value."""

    __slots__ = ("kind", "patterns", "accept", "tail", "keyword", "trigger", "folded", "text_only")
    trigger: tuple[str | re.Pattern[str], ...] | None

    def __init__(self, kind: str, patterns: list[tuple[re.Pattern[str], tuple[int, ...]]],
                 accept: Callable[[str], set[str]] | None, tail: re.Pattern[str] | None, keyword: bool,
                 trigger: tuple[tuple[str, ...], bool] | None, text_only: bool = False) -> None:
        self.kind = kind
        self.patterns = patterns
        self.accept = accept  # the plugin's own analyze_string: which values it stands by on a line
        self.tail = tail
        self.keyword = keyword
        # What every line it flags holds: one of these literals (found by str.find) or expressions (each
        # starting with a literal, which re finds fast); in the case-folded text when `folded`.
        self.trigger = tuple(t if _is_literal(t) else re.compile(t) for t in trigger[0]) if trigger else None
        self.folded = bool(trigger and trigger[1])
        self.text_only = text_only  # not for files: examples in docs and docstrings would leave them out


def _is_literal(expression: str) -> bool:
    return not any(char in expression for char in "\\.^$*+?{}[]|()")


def _groups(pattern: re.Pattern[str]) -> tuple[int, ...]:
    """The groups `findall` reports for PATTERN (what RegexBasedDetector yields): all, or the match."""
    return tuple(range(1, pattern.groups + 1)) if pattern.groups else (0,)


@functools.lru_cache(maxsize=1)
def _extra_detectors() -> tuple[type, ...]:
    """detect-secrets plugins for the secret shapes its 1.5.0 release does not know."""
    from detect_secrets.plugins.base import RegexBasedDetector

    class GitHubFineGrainedTokenDetector(RegexBasedDetector):
        """GitHub's fine-grained personal access tokens (1.5.0 knows only ghp_, gho_, ghu_, ghs_, ghr_)."""

        secret_type = "GitHub Token"
        trigger = (("github_pat_",), False)
        denylist = (re.compile(r"github_pat_[A-Za-z0-9_]{22,}"),)

    class OpenAIKeyDetector(RegexBasedDetector):
        """OpenAI project, service-account and admin keys, and plain ones of 40 characters or more (1.5.0
        needs the legacy T3BlbkFJ infix)."""

        secret_type = "OpenAI Token"
        trigger = (("sk-",), False)
        denylist = (re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"),
                    re.compile(r"(?<![A-Za-z0-9_\-])sk-[A-Za-z0-9]{40,}"))

    class AnthropicKeyDetector(RegexBasedDetector):
        """Anthropic API, admin and OAuth keys (sk-ant-api03-…, sk-ant-admin01-…, sk-ant-oat01-…)."""

        secret_type = "Anthropic API Key"
        trigger = (("sk-ant-",), False)
        denylist = (re.compile(r"sk-ant-[a-z]+[0-9]*-[A-Za-z0-9_\-]{20,}"),)

    class SecretAssignmentDetector(RegexBasedDetector):
        """`DB_PASSWORD=hunter2`, `export GITHUB_TOKEN=…`: a shell or .env assignment to a secret-named
        variable, unquoted (the keyword plugin wants quotes outside config files). Upper-case names only,
        so `self.password = password` in code is not one; `$VAR` and `${VAR}` references are not values."""

        secret_type = "Secret Assignment"
        trigger = (("PASS", "PWD", "SECRET", "TOKEN", "KEY", "CREDENTIAL"), False)
        denylist = (re.compile(
            r"(?<![A-Za-z0-9_])[A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|API_KEY|APIKEY|SECRET_KEY"
            r"|PRIVATE_KEY|ACCESS_KEY|CREDENTIALS?)=(?!0x[0-9a-fA-F]+\b)([^\s'\"$<{][^\s'\"]*)"),)

    class LooseSecretAssignmentDetector(RegexBasedDetector):
        """`aws_secret_access_key = wJalr…`, `?password=s3cret9&…`: any-case secret names assigned an
        unquoted token (INI files pasted in a prompt, query strings). The value must look like one: six
        characters or more with a digit, none that a call or an expression has, so `token = token`,
        `secret = derive(key2)` and `password == other2` are not. Text only: in files it flagged 8 of
        20,000 (example tokens in OAuth libraries' docstrings), and config files have detect-secrets' own
        unquoted rules."""

        secret_type = "Secret Assignment"
        text_only = True
        trigger = (("pass", "pwd", "secret", "token", "key"), True)
        denylist = (re.compile(
            r"(?i:password|passwd|pwd|secret|token|api_?key|secret_?key|access_?key|private_?key)"
            r"[ \t]*=[ \t]*(?=[^\s'\"$<{}()\[\],;=&]*\d)([^\s'\"$<{}()\[\],;=&]{6,})"),)

    class PrivateKeyMoreDetector(RegexBasedDetector):
        """Private keys 1.5.0's PrivateKeyDetector misses: PKCS#8 encrypted ones and PuTTY's version 3."""

        secret_type = "Private Key"
        trigger = (("BEGIN ENCRYPTED", "PuTTY-User-Key-File-3"), False)
        denylist = (re.compile(r"BEGIN ENCRYPTED PRIVATE KEY"), re.compile(r"PuTTY-User-Key-File-3"))

    return (GitHubFineGrainedTokenDetector, OpenAIKeyDetector, AnthropicKeyDetector, SecretAssignmentDetector,
            LooseSecretAssignmentDetector, PrivateKeyMoreDetector)


# The prefilter: for each plugin, something every line it flags contains, far cheaper to find than its own
# patterns (which start with lookbehinds and optional groups, and run at 0.3 MB/s over source code).
# (expression, searched in the case-folded text). Each is read off the plugin's patterns; the tests check
# that scanning only the lines these find gives what scanning every line gives. A plugin missing here
# (a future detect-secrets') scans every line: slower, never blind.
_TRIGGERS: dict[str, tuple[tuple[str, ...], bool]] = {
    "AWSKeyDetector": (("a3t", "abia", "acca", "akia", "asia", "aws"), True),
    "ArtifactoryDetector": (("AKC", r"AP[\dA-F]"), False),
    "AzureStorageKeyDetector": (("AccountKey=",), False),
    "BasicAuthDetector": (("://",), False),
    "CloudantDetector": ((r"cl(?:oudant|ou)?[_-]?(?:api)?(?:key|pw|pass|token)", r"cloudant\.com"), True),
    "DiscordBotTokenDetector": ((r"\.[a-zA-Z\d_-]{6}\.",), False),
    "GitHubTokenDetector": ((r"gh[pousr]_",), False),
    "GitLabTokenDetector": ((r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-", "GR1348941"), False),
    "IbmCloudIamDetector": (("key", "pwd", "pass", "token"), True),
    "IbmCosHmacDetector": (("secret",), True),
    "JwtTokenDetector": (("eyJ",), False),
    "MailchimpDetector": ((r"-us[0-9]",), False),
    "NpmDetector": (("_authToken=",), False),
    "OpenAIDetector": (("T3BlbkFJ",), False),
    "PrivateKeyDetector": (("BEGIN", "PuTTY-User-Key-File-2"), False),
    "PypiTokenDetector": (("pypi-AgE",), False),
    "SendGridDetector": ((r"SG\.",), False),
    "SlackDetector": (("xox", r"hooks\.slack\.com"), True),
    "SoftlayerDetector": (("softlayer", r"sl[_-]?(?:api)?[_-]?(?:key|pwd|pass|token)"), True),
    "SquareOAuthDetector": (("sq0csp-",), False),
    "StripeDetector": (("k_live_",), False),
    "TelegramBotTokenDetector": ((r":[0-9A-Za-z_-]{35}",), False),
    "TwilioKeyDetector": ((r"AC[a-z0-9]{32}", r"SK[a-z0-9]{32}"), False),
    "KeywordDetector": ((*(f"{stem}{sep}key" for stem in ("api", "auth", "service", "account", "db", "database",
                                                         "priv", "private", "client") for sep in ("", "_")),
                         *(f"{stem}{sep}pass" for stem in ("db", "database", "key") for sep in ("", "_")),
                         "password", "passwd", "pwd", "secret", "contrase"), True),
}

_LEFT_OUT_PLUGINS = ("HexHighEntropyString", "Base64HighEntropyString", "IPPublicDetector", "ArtifactoryDetector",
                     "KeywordDetector")  # (the keyword plugin is driven on its own: its patterns are per file type)


@functools.cache
def _detectors(keyword_table: str) -> tuple[_Detector, ...]:
    """The detectors, with the keyword plugin's table for KEYWORD_TABLE (a detect-secrets FileType name;
    "OTHER" is what text gets: quotes required)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.util.filetype import FileType

    mapping: dict[str, type] = get_mapping_from_secret_type_to_class()
    classes: list[type] = [c for c in mapping.values() if c.__name__ not in _LEFT_OUT_PLUGINS]
    classes += _extra_detectors()
    found: list[_Detector] = []
    for cls in sorted(classes, key=lambda c: c.__name__):
        if not issubclass(cls, RegexBasedDetector):  # a newer detect-secrets: refuse rather than go blind
            raise RewindError(f"detect-secrets' {cls.__name__} is not one redact.py can drive (it knows 1.5)")
        plugin = cls()
        kind = str(cls.secret_type)
        tail = None if kind in _NO_TAIL else _JWT_TAIL if kind == "JSON Web Token" else _TOKEN_TAIL
        accept = None
        if type(plugin).analyze_string is not RegexBasedDetector.analyze_string:  # a plugin that filters (JWT)
            accept = _values_of(plugin)
        trigger = getattr(cls, "trigger", None) or _TRIGGERS.get(cls.__name__)
        found.append(_Detector(kind, [(p, _groups(p)) for p in plugin.denylist], accept, tail, False, trigger,
                               getattr(cls, "text_only", False)))
    table = keyword.REGEX_BY_FILETYPE.get(FileType[keyword_table], keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
    found.append(_Detector("Secret Keyword", [(p, (g,)) for p, g in table.items()], None, None, True,
                           _TRIGGERS["KeywordDetector"]))
    return tuple(found)


def _values_of(plugin: Any) -> Callable[[str], set[str]]:
    return lambda line: set(plugin.analyze_string(line))


def _keyword_table(path: str) -> str:
    """The detect-secrets file type whose keyword rules apply to PATH."""
    from detect_secrets.util.filetype import determine_file_type

    return str(determine_file_type(path).name)


def _keyword_kept(value: str, line: str) -> bool:
    """detect-secrets' own heuristics against keyword false positives (`password = "${PASSWORD}"`,
    `secret = get_secret()`, `password: "<password>"`, a uuid or id in a keyword's place)."""
    from detect_secrets.filters import heuristic

    return not (heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value)
                or heuristic.is_sequential_string(value) or heuristic.is_potential_uuid(value)
                or heuristic.is_not_alphanumeric_string(value) or heuristic.is_indirect_reference(line)
                or heuristic.is_likely_id_string(value, line))


# Scanning text --------------------------------------------------------------------------------


class _Hit:
    __slots__ = ("start", "end", "kind", "line")

    def __init__(self, start: int, end: int, kind: str, line: int = 0) -> None:
        self.start, self.end, self.kind, self.line = start, end, kind, line


class _Lines:
    """Where a text's lines start, found only as far as needed: most texts hold no trigger at all, and
    a scan then costs one `find` per trigger."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | None = None
        self._folded: tuple[str, list[int], list[int]] | None = None

    def all(self) -> list[int]:
        return _starts(self.text)

    def touched(self, triggers: Iterable[str | re.Pattern[str]], folded: bool) -> set[int]:
        """The starts of the lines holding one of TRIGGERS (in the case-folded text when FOLDED)."""
        if not folded:
            return _touched(triggers, self.text)
        if self.text.isascii():  # lower() keeps every offset
            if self._lower is None:
                self._lower = self.text.lower()
            return _touched(triggers, self._lower)
        if self._folded is None:  # casefold() may change lengths, never the line breaks: map lines by number
            text = self.text.casefold()
            self._folded = text, _starts(text), _starts(self.text)
        text, folded_starts, starts = self._folded
        return {starts[bisect.bisect_right(folded_starts, start) - 1] for start in _touched(triggers, text)}


def _starts(text: str) -> list[int]:
    ends = list(itertools.accumulate(map(len, text.split("\n"))))
    return [0, *(end + number for number, end in enumerate(ends[:-1], 1))]


def _touched(triggers: Iterable[str | re.Pattern[str]], text: str) -> set[int]:
    """The starts of TEXT's lines holding one of TRIGGERS (a literal or an expression, never across lines)."""
    found: set[int] = set()
    for trigger in triggers:
        if isinstance(trigger, str):
            pos = text.find(trigger)
            while pos >= 0:
                found.add(text.rfind("\n", 0, pos) + 1)
                end = text.find("\n", pos)
                pos = text.find(trigger, end) if end >= 0 else -1
        else:
            found.update(text.rfind("\n", 0, m.start()) + 1 for m in trigger.finditer(text))
    return found


def _scan_line(line: str, offset: int, det: _Detector) -> Iterator[_Hit]:
    """One detector's part of detect-secrets' per-line scan, as spans of the text (OFFSET: where the line
    starts)."""
    line = line.rstrip()  # as detect-secrets reads a line
    accepted = det.accept(line) if det.accept else None
    for pattern, groups in det.patterns:
        for match in pattern.finditer(line):
            for group in groups:
                start, end = match.span(group)
                value = match.group(group)
                if not value or (accepted is not None and value not in accepted):
                    continue
                if det.keyword and not _keyword_kept(value, line):
                    continue
                if det.tail:
                    tail = det.tail.match(line, end)
                    end = tail.end() if tail else end
                yield _Hit(offset + start, offset + end, det.kind)


# A key cut short (no END): the rest of its BEGIN line, then the lines that look like a key's body
# (base64, `Proc-Type:`-style headers, blank lines), so code that only names the marker loses little.
_KEY_BODY = re.compile(r"[^\n]*(?:\n[ \t]*(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: [^\n]*|)[ \t]*(?=\n|$))*")


def _whole_keys(text: str, hits: list[_Hit]) -> None:
    """Stretch each private key hit over the whole key: detect-secrets flags its BEGIN line, and the key
    is the lines after it, up to its END (or, cut short, as far as its lines look like one)."""
    for hit in hits:
        if hit.kind != "Private Key":
            continue
        label = text[hit.start:hit.end]
        if label.startswith("BEGIN "):
            while hit.start > 0 and text[hit.start - 1] in "- ":
                hit.start -= 1
            end = re.compile("END " + re.escape(label[len("BEGIN "):]) + "[ -]*").search(text, hit.end)
        else:  # PuTTY's key files end with their MAC line
            end = re.compile("Private-MAC: *[0-9a-fA-F]*").search(text, hit.end)
        body = end or _KEY_BODY.match(text, hit.end)  # (the body's pattern matches anywhere, if only "")
        hit.end = body.end() if body else len(text)


# Encoded text: a run of base64 (standard or URL-safe alphabet; on one line, or whole lines wrapped as
# `base64` and PEM wrap them) or of hex digits, long enough to hold a short key (24 base64 characters, 32
# hex digits). Each one that decodes to text is scanned as text; a secret inside makes the whole run the hit.
# Runs are looked for only in the words (split at white space) of 24 characters or more: a regular
# expression over the whole text would cost more than the scan itself.
_RUN_LENGTH = 24
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){16,}(?![0-9A-Fa-f])")
_NEXT_LINE = re.compile(r"[ \t]*\r?\n[ \t]*([A-Za-z0-9+/]+={0,2})[ \t]*(?=\r?\n|$)")  # a base64 line, the next
_LINE_END = re.compile(r"[ \t]*(?:\r?\n|$)")
_WRAP = 40  # the narrowest line width taken for wrapping (base64 wraps at 76, PEM at 64)
_PRINTABLE = 0.95  # the share of decoded characters that must be printable (or spacing) for it to be text
# The first character of each 4 of base64 holds the top 6 bits of a byte: A-Z or a-f for ASCII. Runs where
# more than 1 in 10 is not (identifiers, paths, hashes) are not decoded at all: most long words are those.
_NOT_ASCII_LEAD = str.maketrans("", "", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef")


def _decoded(run: str, hex_digits: bool) -> str | None:
    """The text RUN encodes, or None when it does not decode to text (hashes, images, ids, identifiers)."""
    import base64
    import binascii

    try:
        if hex_digits:
            raw = bytes.fromhex(run)
        else:
            packed = "".join(run.split()).rstrip("=").replace("-", "+").replace("_", "/")
            leads = packed[::4]
            if len(leads.translate(_NOT_ASCII_LEAD)) * 10 > len(leads):
                return None
            if len(packed) % 4 == 1:
                packed = packed[:-1]
            raw = base64.b64decode(packed + "=" * (-len(packed) % 4), validate=True)
        text = raw.decode("utf-8")
    except (ValueError, binascii.Error):
        return None
    if len(text) < 16:
        return None
    if text.isprintable():
        return text
    readable = sum(1 for char in text if char.isprintable() or char in "\t\n\r")
    return text if readable >= _PRINTABLE * len(text) else None


def _encoded_runs(text: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, hex digits) of each run of TEXT that may encode text: base64 runs, the hex runs in them,
    and blocks of whole base64 lines wrapped at one width."""
    pos = 0
    for word in [w for w in text.split() if len(w) >= _RUN_LENGTH]:
        at = text.find(word, pos)
        pos = at + len(word)
        for match in _BASE64_RUN.finditer(word):
            start, end = at + match.start(), at + match.end()
            yield start, end, False
            yield from ((start + h.start(), start + h.end(), True) for h in _HEX_RUN.finditer(match.group()))
            if end - start == len(word) >= _WRAP:
                block = _wrapped(text, start, end)
                if block > end:
                    yield start, block, False


def _wrapped(text: str, start: int, end: int) -> int:
    """Where the block of wrapped base64 lines whose first line is TEXT[START:END] ends (END: none follows).
    Every line but the last is as wide as the first; each holds nothing else but spacing."""
    if text[text.rfind("\n", 0, start) + 1:start].strip() or not _LINE_END.match(text, end):
        return end
    width = end - start
    last = end
    while (line := _NEXT_LINE.match(text, last)) and len(line.group(1)) <= width:
        last = line.end(1)
        if len(line.group(1)) < width or line.group(1).endswith("="):
            break
    return last


def _encoded(text: str, keyword_table: str, file: bool) -> Iterator[_Hit]:
    """The runs of TEXT that encode a secret (base64 or hex of text a scan flags), each whole, as the kind
    found inside with how it was encoded."""
    for start, end, hex_digits in _encoded_runs(text):
        decoded = _decoded(text[start:end], hex_digits)
        if decoded is None:
            continue
        inner = _scan(decoded, keyword_table, file=file, decode=False)
        if inner:
            yield _Hit(start, end, f"{inner[0].kind} ({'hex' if hex_digits else 'base64'})")


def _scan(text: str, keyword_table: str = "OTHER", every_line: bool = False,
          known: dict[str, str] | None = None, file: bool = False, decode: bool = True) -> list[_Hit]:
    """Every secret of TEXT as spans, sorted, not overlapping each other nor an earlier marker.

    Each detector scans only the lines its trigger finds (EVERY_LINE: all of them, what the tests
    compare the prefilter with). KNOWN: secret values found elsewhere (value -> kind), which go too.
    FILE: a file's content (the text-only detectors stay out). DECODE: base64 and hex runs are decoded
    and what they hold is scanned too (one level deep)."""
    lines = _Lines(text)
    hits: list[_Hit] = []
    for det in _detectors(keyword_table):
        if file and det.text_only:
            continue
        if every_line or det.trigger is None:
            starts: Iterable[int] = lines.all()
        else:
            starts = sorted(lines.touched(det.trigger, det.folded))
        for start in starts:
            end = text.find("\n", start)
            hits.extend(_scan_line(text[start:end if end >= 0 else len(text)], start, det))
    hits.extend(_occurrences(text, known or {}))
    if decode:
        hits.extend(_encoded(text, keyword_table, file))
    if not hits:
        return hits
    _whole_keys(text, hits)
    hits.extend(_occurrences(text, _distinctive(text, hits)))
    merged = _merge(hits, [m.span() for m in _MARKER_RE.finditer(text)])
    for hit in merged:
        hit.line = text.count("\n", 0, hit.start) + 1
    return merged


def _distinctive(text: str, hits: Iterable[_Hit]) -> dict[str, str]:
    """The values of HITS that go everywhere they appear (a token pasted again without its keyword):
    those distinctive enough not to be an ordinary word, 8 characters or more and not letters only."""
    values: dict[str, str] = {}
    for hit in hits:
        value = text[hit.start:hit.end]
        if hit.kind != "Private Key" and len(value) >= 8 and not value.isalpha() and not _MARKER_RE.search(value):
            values.setdefault(value, hit.kind)
    return values


def _occurrences(text: str, values: dict[str, str]) -> Iterator[_Hit]:
    for value, kind in values.items():
        pos = text.find(value)
        while pos >= 0:
            yield _Hit(pos, pos + len(value), kind)
            pos = text.find(value, pos + 1)


def _merge(hits: list[_Hit], markers: list[tuple[int, int]]) -> list[_Hit]:
    """Overlapping spans as one (the first one's kind); spans touching a marker dropped, so a second
    redaction changes nothing."""
    merged: list[_Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start, -h.end)):
        if any(start < hit.end and hit.start < end for start, end in markers):
            continue
        if merged and hit.start < merged[-1].end:
            merged[-1].end = max(merged[-1].end, hit.end)
            continue
        merged.append(_Hit(hit.start, hit.end, hit.kind))
    return merged


def redact_text(text: str, where: str = "text", known: dict[str, str] | None = None) -> tuple[str, list[Finding]]:
    """TEXT with every secret value replaced by its marker, and what was replaced (one finding each).

    Ordinary text, object ids, uuids and paths come back as they were; redacting twice is redacting once.
    KNOWN: secret values found elsewhere in the same document (value -> kind), which go too.
    """
    if not text:
        return text, []
    hits = _scan(text, known=known)
    if not hits:
        return text, []
    parts: list[str] = []
    pos = 0
    for hit in hits:
        parts += [text[pos:hit.start], MARKER.format(kind=hit.kind)]
        pos = hit.end
    parts.append(text[pos:])
    return "".join(parts), [Finding(hit.kind, where) for hit in hits]


# Transcripts ----------------------------------------------------------------------------------

_JSON_STRING = re.compile(r'("(?:[^"\\]|\\.)*")', re.DOTALL)  # in a JSON text every `"` outside strings opens one


def redact_transcript(raw: bytes, where: str = "transcript") -> tuple[bytes, list[Finding]]:
    """A JSONL transcript with every string in it redacted (values and keys), and what was replaced.

    Lines with nothing to redact are kept byte for byte and the others change only inside the string
    values that held a secret, so positions found by uuid stay where they were and every line stays JSON.
    Lines that are not JSON are redacted as text (a run of them together, so a key block spanning them
    goes whole); a file that is one JSON document (Gemini's older chat files) is redacted as one, its
    layout kept. A value whose key makes it a secret (`"password": "…"`) goes whole, and a distinctive
    secret found anywhere goes everywhere else it appears in the transcript.
    """
    document = _whole_document(raw)
    if document is not None:
        return _redact_document(raw, document, where)
    runs = _runs(raw.split(b"\n"))
    texts = [_text_of(run) for run in runs]
    known, touched = _survey(texts)
    out: list[bytes] = []
    findings: list[Finding] = []
    for number, (run, text) in enumerate(zip(runs, texts, strict=True)):
        if run.line is None:
            untouched = number not in touched and not _holds_any(text, known)
            out += run.parsed if untouched else _redact_plain(run.parsed, findings, where, known)
        elif number not in touched and not _holds_any(text, known):
            out.append(run.line)
        else:
            out.append(_redact_json_line(run.line, run.parsed, findings, where, known))
    return b"\n".join(out), findings


class _Run:
    """A JSON line of a transcript (LINE, and PARSED, its value), or a run of lines that are not JSON
    (LINE None, PARSED the lines)."""

    __slots__ = ("line", "parsed")

    def __init__(self, line: bytes | None, parsed: Any) -> None:
        self.line = line
        self.parsed = parsed


def _runs(lines: list[bytes]) -> list[_Run]:
    """Each JSON line alone, and each run of consecutive other lines together."""
    runs: list[_Run] = []
    for line in lines:
        parsed = _json_line(line)
        if parsed is not None:
            runs.append(_Run(line, parsed))
        elif runs and runs[-1].line is None:
            runs[-1].parsed.append(line)
        else:
            runs.append(_Run(None, [line]))
    return runs


def _text_of(run: _Run) -> str:
    """What is scanned of a run: the strings of a JSON line and its pairs that need their key, the text of
    other lines."""
    if run.line is None:
        return b"\n".join(run.parsed).decode("utf-8", "surrogateescape")
    return "\n".join([*_strings(run.parsed), *(_pair_line(k, v) for k, v in _pairs(run.parsed))])


# A key that may make its value a secret (`{"apiKey": "…"}`: the keyword plugin needs both to see it).
_SECRET_KEY_WORDS = ("key", "pass", "pwd", "token", "secret", "contrase", "auth", "credential", "cred")


def _pairs(value: Any) -> list[tuple[str, str]]:
    """The (key, string value) pairs inside VALUE whose key sounds like a secret's."""
    found: list[tuple[str, str]] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if isinstance(child, str):
                    if child and any(word in key.casefold() for word in _SECRET_KEY_WORDS):
                        found.append((key, child))
                else:
                    todo.append(child)
        elif isinstance(item, list):
            todo.extend(item)
    return found


def _pair_line(key: str, value: str) -> str:
    return f"{json.dumps(key)}: {json.dumps(value)}"


def _flagged(value: Any) -> dict[str, str]:
    """The string values inside VALUE that are secrets by their key (`"password": "hunter2"`): value ->
    kind. Each goes whole, wherever it stands in the line or document."""
    flagged: dict[str, str] = {}
    for key, child in _pairs(value):
        line = _pair_line(key, child)
        hit = next((h for h in _scan(line) if h.end > len(json.dumps(key)) + 2), None)
        if hit:
            flagged[child] = hit.kind
    return flagged


def _survey(texts: list[str]) -> tuple[dict[str, str], set[int]]:
    """One scan over all TEXTS joined: the distinctive secret values found, and which texts hold a hit
    (scanning them one by one would cost the triggers' searches for every line of the transcript)."""
    joined = "\n".join(texts)
    hits = _scan(joined)
    if not hits:
        return {}, set()
    starts = [0]
    for text in texts[:-1]:
        starts.append(starts[-1] + len(text) + 1)
    touched: set[int] = set()
    for hit in hits:
        first = bisect.bisect_right(starts, hit.start) - 1
        last = bisect.bisect_right(starts, max(hit.start, hit.end - 1)) - 1
        touched.update(range(first, last + 1))
    return _distinctive(joined, hits), touched


def _holds_any(text: str, known: dict[str, str]) -> bool:
    return any(value in text for value in known)


def _whole_document(raw: bytes) -> Any | None:
    """The JSON document RAW is, when it is one that spans several lines (not JSONL)."""
    stripped = raw.strip()
    if not stripped.startswith((b"{", b"[")) or b"\n" not in stripped:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _redact_document(raw: bytes, document: Any, where: str) -> tuple[bytes, list[Finding]]:
    """A whole JSON document, redacted as a JSON line is: only the strings that held a secret change."""
    known, touched = _survey([*_strings(document), *(_pair_line(k, v) for k, v in _pairs(document))])
    if not touched:
        return raw, []
    findings: list[Finding] = []
    return _redact_json_line(raw, document, findings, where, known), findings


def _redact_string(value: str, findings: list[Finding], where: str, known: dict[str, str],
                   flagged: dict[str, str]) -> str:
    """One string of a JSON text: whole when its key made it a secret, else redacted as text."""
    if value in flagged:
        findings.append(Finding(flagged[value], where))
        return MARKER.format(kind=flagged[value])
    text, found = redact_text(value, where, known)
    findings += found
    return text


def _json_line(line: bytes) -> Any | None:
    """LINE parsed, if it is a JSON object or array (what transcript lines are)."""
    stripped = line.strip()
    if not stripped.startswith((b"{", b"[")):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def _strings(value: Any) -> list[str]:
    """Every string inside VALUE, keys included, in no particular order."""
    found: list[str] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(item)  # keys too: a secret is a secret wherever it sits
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return found


def _redact_json_line(line: bytes, parsed: Any, findings: list[Finding], where: str,
                      known: dict[str, str]) -> bytes:
    """LINE (a JSON text, PARSED) with each string (value or key) that holds a secret replaced by its
    redacted JSON, every other byte kept (numbers, spacing, escapes of the untouched strings)."""
    text = line.decode("utf-8", "surrogateescape")
    flagged = _flagged(parsed)
    parts: list[str] = []
    pos = 0
    for match in _JSON_STRING.finditer(text):
        token = match.group(1)
        value = json.loads(token)
        before = len(findings)
        redacted = _redact_string(value, findings, where, known, flagged)
        if len(findings) == before:
            continue
        parts += [text[pos:match.start(1)], json.dumps(redacted, ensure_ascii=token.isascii())]
        pos = match.end(1)
    parts.append(text[pos:])
    return "".join(parts).encode("utf-8", "surrogateescape")


def _redact_plain(lines: list[bytes], findings: list[Finding], where: str, known: dict[str, str]) -> list[bytes]:
    text = b"\n".join(lines).decode("utf-8", "surrogateescape")
    redacted, found = redact_text(text, where, known)
    if not found:
        return lines
    findings += found
    return redacted.encode("utf-8", "surrogateescape").split(b"\n")


# Files ----------------------------------------------------------------------------------------

_EXAMPLE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".defaults")
_KEY_NAMES = frozenset({"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"})
_KEY_EXTENSIONS = (".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", ".ppk", ".pkcs12")
_CREDENTIAL_NAMES = {
    ".netrc": "credentials file (.netrc)",
    "_netrc": "credentials file (.netrc)",
    ".pgpass": "credentials file (.pgpass)",
    ".git-credentials": "credentials file (.git-credentials)",
    ".pypirc": "credentials file (.pypirc)",
    ".htpasswd": "credentials file (.htpasswd)",
    "credentials.json": "cloud credentials file (credentials.json)",
    "client_secret.json": "cloud credentials file (client_secret.json)",
    "service-account.json": "cloud credentials file (service-account.json)",
    "service_account.json": "cloud credentials file (service_account.json)",
    "application_default_credentials.json": "cloud credentials file (application_default_credentials.json)",
    "secrets.yml": "looks like a secrets file (secrets.yml)",
    "secrets.yaml": "looks like a secrets file (secrets.yaml)",
    "secrets.json": "looks like a secrets file (secrets.json)",
    "secrets.toml": "looks like a secrets file (secrets.toml)",
}
# Under these folders a file named `credentials` or `config` is the cloud tool's own (~/.aws/credentials).
_CREDENTIAL_FOLDERS = {".aws": ("credentials",), ".docker": ("config.json",), ".kube": ("config",),
                       ".ssh": ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")}


def name_reason(path: str) -> str | None:
    """Why PATH's name alone makes it a secrets file, or None: .env files (not .env.example), private
    keys and keystores, credential files of ssh, git, netrc, npm, PyPI, PostgreSQL and the clouds."""
    base = os.path.basename(path)
    lower = base.lower()
    folder = os.path.basename(os.path.dirname(path))
    if lower.endswith(".env") or (lower.startswith(".env.") and not lower.endswith(_EXAMPLE_SUFFIXES)):
        return f"looks like a secrets file ({base})"
    if lower in _KEY_NAMES:
        return "private key"
    if lower.endswith(_KEY_EXTENSIONS):
        return f"private key or keystore ({os.path.splitext(base)[1]})"
    if lower in _CREDENTIAL_NAMES:
        return _CREDENTIAL_NAMES[lower]
    if base in _CREDENTIAL_FOLDERS.get(folder, ()):
        return f"credentials file ({folder}/{base})"
    return None


def secret_names(paths: Iterable[str]) -> dict[str, str]:
    """The paths among PATHS whose text holds a secret (a token in a file or folder name: `backup-ghp_….txt`),
    each with the secret's kind. Such a path goes nowhere a push sends, whatever the file holds: its name would
    carry the secret in a tree entry, a note's `paths` or `origins`. All of them in one scan (one line
    each; the scan of a line costs its triggers' searches)."""
    listed = list(dict.fromkeys(paths))
    if not listed:
        return {}
    joined = "\n".join(listed)
    hits = _scan(joined)
    if not hits:
        return {}
    starts = [0]
    for path in listed[:-1]:
        starts.append(starts[-1] + len(path) + 1)
    found: dict[str, str] = {}
    for hit in hits:
        first = bisect.bisect_right(starts, hit.start) - 1
        last = bisect.bisect_right(starts, max(hit.start, hit.end - 1)) - 1
        for number in range(first, last + 1):
            found.setdefault(listed[number], hit.kind)
    return found


def is_redacted(text: str) -> bool:
    """TEXT holds a marker: a secret was taken out of it."""
    return bool(_MARKER_RE.search(text))


def shown_path(path: str) -> str:
    """PATH as push may print or send it: a secret in its name replaced by the marker."""
    return redact_text(path)[0]


def cache_path(repo: Repo) -> str:
    """The file of blob verdicts, beside the copy's other caches (a purge's `share.discard_copy` drops
    them all; the verdicts are then found again)."""
    return os.path.join(repo.share_dir, _CACHE_NAME)


def secret_paths(repo: Repo, entries: list[tuple[str, str]]) -> dict[str, str]:
    """The paths of a checkpoint tree (ENTRIES: path, blob oid) that must stay out of a pushed tree,
    each with its reason.

    A name that looks like a secrets file is enough; every other text file is scanned, and its verdict
    kept by blob oid and extension (which picks the keyword rules) in `cache_path`, so a blob is read and
    scanned once, ever, and a push that finds every verdict there imports no scanner.
    Binary files (a NUL in their first 8,000 bytes, as git decides; UTF-16 text too) are not scanned;
    text files are scanned whole (checkpoints hold no file over max_file_size, 50 MiB by default, and
    each blob is scanned once). Ask once per push with every (path, oid) of its checkpoints, deduplicated:
    a path costs ~10 µs even when its verdict is cached.
    """
    reasons: dict[str, str] = {}
    wanted: dict[str, list[str]] = {}  # cache key -> paths
    for path, oid in entries:
        reason, extension = _path_facts(path)
        if reason:
            reasons[path] = reason
        else:
            wanted.setdefault(f"{oid} {extension}", []).append(path)
    if not wanted:
        return reasons
    cache = _read_cache(repo)
    fresh = {key: paths[0] for key, paths in wanted.items() if key not in cache}
    if fresh:
        verdicts = _scan_blobs(repo, fresh)
        _append_cache(repo, verdicts)
        cache.update(verdicts)
    for key, paths in wanted.items():
        if cache.get(key):
            reasons.update(dict.fromkeys(paths, cache[key]))
    return reasons


@functools.lru_cache(maxsize=1 << 16)
def _path_facts(path: str) -> tuple[str | None, str]:
    """PATH's name reason, and its extension as the cache keys spell it (detect-secrets picks its keyword
    rules by the extension alone, case and all). Kept: a push asks about the same paths checkpoint after
    checkpoint."""
    return name_reason(path), json.dumps(os.path.splitext(path)[1])


# cache file -> (its inode, bytes read, verdicts): a push that asks once per checkpoint reads only what
# was appended since. Verdicts are facts about blob contents, so one read earlier is never wrong.
_READ: dict[str, tuple[int, int, dict[str, str]]] = {}


def _read_cache(repo: Repo) -> dict[str, str]:
    """Cache key ("<oid> <extension as JSON>") -> reason, "" for a clean blob.

    A record is `<key>TAB<reason>TAB`: one a kill cut short lacks its last tab and is no verdict."""
    path = cache_path(repo)
    try:
        with open(path, "rb") as f:
            inode = os.fstat(f.fileno()).st_ino
            known = _READ.get(path)
            start, cache = (known[1], known[2]) if known and known[0] == inode else (0, {})
            f.seek(start)
            data = f.read()
    except FileNotFoundError:
        _READ.pop(path, None)
        return {}
    _READ[path] = (inode, start + len(data), cache)
    for line in data.decode("utf-8", "replace").split("\n"):
        fields = line.split("\t")
        if len(fields) == 3 and fields[2] == "":
            cache[fields[0]] = fields[1]
    return dict(cache)


def _append_cache(repo: Repo, verdicts: dict[str, str]) -> None:
    """Add VERDICTS to the cache file: appended, each record ended by a tab, a reader trusts whole ones."""
    path = cache_path(repo)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = "".join(f"{key}\t{reason}\t\n" for key, reason in verdicts.items()).encode()
    with open(path, "a+b") as f:
        if f.seek(0, os.SEEK_END) and (f.seek(-1, os.SEEK_END), f.read(1))[1] != b"\n":
            data = b"\n" + data  # a record a kill cut short stays alone on its line
        f.write(data)


def _scan_blobs(repo: Repo, wanted: dict[str, str]) -> dict[str, str]:
    """The verdict of each blob of WANTED (cache key -> one path it has), read in batches of at most
    _BATCH_BYTES through one `cat-file --batch` each. A blob the repository lacks has none (it may
    arrive later, from a partial clone's promisor: it is read then)."""
    from ..base import gitcmd

    keys = list(wanted)
    sizes = _sizes(repo, [key.split(" ", 1)[0] for key in keys])
    verdicts: dict[str, str] = {}
    batch: list[str] = []
    total = 0
    for number, (key, size) in enumerate(zip(keys, sizes, strict=True), 1):
        batch.append(key)
        total += size
        if total >= _BATCH_BYTES or number == len(keys):
            objects = gitcmd.cat_file([k.split(" ", 1)[0] for k in batch], cwd=repo.root)
            for k, obj in zip(batch, objects, strict=True):
                if obj is not None:
                    verdicts[k] = (scan_file(wanted[k], obj[1]) if obj[0] == "blob" else None) or ""
            batch, total = [], 0
    return verdicts


def _sizes(repo: Repo, oids: list[str]) -> list[int]:
    """Each object's size (0 for a missing one), through one `cat-file --batch-check`."""
    from ..base import gitcmd

    out = gitcmd.run(["cat-file", "--batch-check=%(objectsize)"], cwd=repo.root,
                     input="".join(f"{oid}\n" for oid in oids).encode())
    return [int(line) if line.isdigit() else 0 for line in out.decode().split("\n")[:len(oids)]]


def scan_file(path: str, data: bytes) -> str | None:
    """Why the content DATA of file PATH is a secret, or None: the first detection, with its line."""
    if b"\0" in data[:_BINARY_PROBE]:
        return None
    text = data.decode("utf-8", "replace")
    hits = _scan(text, _keyword_table(path), file=True)
    if not hits:
        return None
    return f"detect-secrets: {hits[0].kind} on line {hits[0].line}"
