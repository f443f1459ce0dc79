"""redact: what `push` may not send. Secret values become markers, secret-looking files are named.

Every test plants realistic secrets and then looks for their bytes in what comes out, as the tests
against the servers grep the servers' objects: a secret that survives in any form is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_rewind.base.repo import Repo
from git_rewind.sharing import redact

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted([*ROOT.glob("tests/samples/**/*.jsonl"), *Path("/work/shared/agents/samples").glob("**/*.jsonl")])

# (kind, secret value, a line holding it). Values are shaped as the real ones are, and fake.
SECRETS = [
    ("AWS Access Key", "AKIAZ7QRT3XLPM4KWN2B", "the key is AKIAZ7QRT3XLPM4KWN2B, use it"),
    ("AWS Access Key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vLk2Tn1",
     'aws_secret_access_key = "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"'),
    ("GitHub Token", "ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1",
     "push with ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1 please"),
    ("GitHub Token", "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2",
     "token: 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2"),
    ("GitLab Token", "glpat-Xy7Qw3Er9Tz1Ui5Op2As", "GITLAB glpat-Xy7Qw3Er9Tz1Ui5Op2As here"),
    ("Slack Token", "xoxb-2948571034-5839201746385-Qk8ZrT3mW9pLx2VbN7cF4sHd",
     "bot xoxb-2948571034-5839201746385-Qk8ZrT3mW9pLx2VbN7cF4sHd ok"),
    ("Stripe Access Key", "sk_live_51HxQ2bL8mK3nP7rT9vW1yZ4cF6gJ0kA5dS8eR2tU6iO3pQ7wX1zC9vB4nM2lK8jH5gF3dS1aQ0wE",
     "STRIPE sk_live_51HxQ2bL8mK3nP7rT9vW1yZ4cF6gJ0kA5dS8eR2tU6iO3pQ7wX1zC9vB4nM2lK8jH5gF3dS1aQ0wE."),
    ("OpenAI Token", "sk-proj-Qm3Zx8Lr2Tn7Vb1Kc9Wd4Hf6Jg0Ps5Ya3Ue8Io2Rt7Ny1Mb4Lc6Xd9Zf0Qa5Ws3Ed8Rf1Tg7Yh2Uj",
     "OPENAI_KEY is sk-proj-Qm3Zx8Lr2Tn7Vb1Kc9Wd4Hf6Jg0Ps5Ya3Ue8Io2Rt7Ny1Mb4Lc6Xd9Zf0Qa5Ws3Ed8Rf1Tg7Yh2Uj"),
    ("OpenAI Token", "sk-Qm3Zx8Lr2Tn7Vb1Kc9Wd4Hf6Jg0Ps5Ya3Ue8Io2Rt7Ny1M",
     "key sk-Qm3Zx8Lr2Tn7Vb1Kc9Wd4Hf6Jg0Ps5Ya3Ue8Io2Rt7Ny1M"),
    ("OpenAI Token", "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",
     "legacy 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"),
    ("Anthropic API Key", "sk-ant-api03-Zq8Xr3Lm7Tn2Vb9Kc1Wd6Hf4Jg0Ps5Ya8Ue3Io7Rt2Ny9Mb1Lc6Xd4-_Zf0Qa5AA",
     "ANTHROPIC sk-ant-api03-Zq8Xr3Lm7Tn2Vb9Kc1Wd6Hf4Jg0Ps5Ya8Ue3Io7Rt2Ny9Mb1Lc6Xd4-_Zf0Qa5AA done"),
    ("JSON Web Token",
     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsIm5hbWUiOiJBZGEifQ.Yx3Qm8Lr2Tn7Vb1Kc9Wd4Hf6Jg0Ps5Ya3Ue8Io2Rt7",
     "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsIm5hbWUiOiJBZGEifQ."
     "Yx3Qm8Lr2Tn7Vb1Kc9Wd4Hf6Jg0Ps5Ya3Ue8Io2Rt7"),
    ("Basic Auth Credentials", "Tr0ub4dor-3x", "git clone https://alice:Tr0ub4dor-3x@git.example.com/team/app.git"),
    ("Secret Keyword", "correct-horse-battery-9", 'password = "correct-horse-battery-9"'),
    ("Secret Keyword", "Zx9!mQ2#kL", '{"api_key": "Zx9!mQ2#kL"}'),
    ("Secret Assignment", "s3cr3t-Pg-42", "run DB_PASSWORD=s3cr3t-Pg-42 ./manage.py migrate"),
    ("Secret Assignment", "tok_9f8e7d6c5b4a", "export GITHUB_TOKEN=tok_9f8e7d6c5b4a"),
    ("Secret Assignment", "Qm3Zx8Lr2Tn7/Vb1Kc9Wd4Hf6Jg0Ps5Ya3Ue8Io",
     "aws_secret_access_key = Qm3Zx8Lr2Tn7/Vb1Kc9Wd4Hf6Jg0Ps5Ya3Ue8Io"),
    ("Secret Assignment", "s3cret9x", "GET https://app.example.com/login?user=bob&password=s3cret9x&next=/"),
    ("SendGrid API Key", "SG.Qm3Zx8Lr2Tn7Vb1Kc9Wd4H.f6Jg0Ps5Ya3Ue8Io2Rt7Ny1Mb4Lc6Xd9Zf0Qa5Ws3Ed8",
     "SG.Qm3Zx8Lr2Tn7Vb1Kc9Wd4H.f6Jg0Ps5Ya3Ue8Io2Rt7Ny1Mb4Lc6Xd9Zf0Qa5Ws3Ed8"),
]

def token(length: int, alphabet: str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
          seed: int = 16) -> str:
    """LENGTH characters of ALPHABET, the same every run, never a run of one character (filters drop those)."""
    import random

    rng = random.Random(seed + length)
    return "".join(rng.choice(alphabet) for _ in range(length))


HEX = "0123456789abcdef"
LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"
# The other plugins' shapes, each in a line as it would appear: (kind, value, line).
MORE_SHAPES = [
    ("Azure Storage Account access key", token(86) + "==",
     f"DefaultEndpointsProtocol=https;AccountName=app;AccountKey={token(86)}==;EndpointSuffix=core.windows.net"),
    ("Cloudant Credentials", token(64, HEX), f'cloudant_password = "{token(64, HEX)}"'),
    ("Cloudant Credentials", token(64, HEX), f"https://acct:{token(64, HEX)}@acct.cloudant.com"),
    ("Discord Bot Token", f"M{token(23)}.{token(6)}.{token(27)}", f"DISCORD M{token(23)}.{token(6)}.{token(27)}"),
    ("IBM Cloud IAM Key", token(44), f'ibm_cloud_iam_key = "{token(44)}"'),
    ("IBM COS HMAC Credentials", token(48, HEX), f'IBM_COS_HMAC_SECRET_ACCESS_KEY = "{token(48, HEX)}"'),
    ("Mailchimp Access Key", f"{token(32, LOWER)}-us12", f"mailchimp {token(32, LOWER)}-us12"),
    ("NPM tokens", f"npm_{token(36)}", f"//registry.npmjs.org/:_authToken=npm_{token(36)}"),
    ("PyPI Token", f"pypi-AgEIcHlwaS5vcmc{token(80)}", f"password: pypi-AgEIcHlwaS5vcmc{token(80)}"),
    ("Square OAuth Secret", f"sq0csp-{token(43)}", f"square sq0csp-{token(43)}"),
    ("Telegram Bot Token", f"123456789:{token(35)}", f"123456789:{token(35)}"),
    ("Twilio API Key", f"AC{token(32, LOWER)}", f"sid AC{token(32, LOWER)}"),
    ("Twilio API Key", f"SK{token(32, LOWER)}", f"key SK{token(32, LOWER)}"),
    ("SoftLayer Credentials", token(64, LOWER), f'SOFTLAYER_API_KEY = "{token(64, LOWER)}"'),
    ("SoftLayer Credentials", token(64, LOWER), f"https://api.softlayer.com/soap/v3/{token(64, LOWER)}"),
    ("Slack Token", f"https://hooks.slack.com/services/T{token(10)}/B{token(10)}/{token(24)}",
     f"webhook https://hooks.slack.com/services/T{token(10)}/B{token(10)}/{token(24)}"),
    ("GitLab Token", f"glptt-{token(40)}", f"trigger glptt-{token(40)}"),
    ("AWS Access Key", f"ASIA{token(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}",
     f"session ASIA{token(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}"),
    ("Private Key", "Private-Lines: 1\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ",
     "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nPrivate-Lines: 1\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\n"
     "Private-MAC: 0123456789abcdef0123456789abcdef01234567"),
]

KEY_BODY = ("MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Lm8Vx5QZ7kR1YwN4cT0bHsE9pLd\n"
            "q8Wj2Xr6Ks1Tn5Vm3Zb7Lc9Gh2Jf4Pd6Qs8Rt0Uw2Yx4Az6Bc8De0Fg2Hi4Jk6Lm8==\n")
KEYS = [
    f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}-----END RSA PRIVATE KEY-----",
    f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}-----END OPENSSH PRIVATE KEY-----",
    f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}-----END PRIVATE KEY-----",
    f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{KEY_BODY}-----END ENCRYPTED PRIVATE KEY-----",
    f"-----BEGIN EC PRIVATE KEY-----\n{KEY_BODY}-----END EC PRIVATE KEY-----",
    f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{KEY_BODY}-----END PGP PRIVATE KEY BLOCK-----",
]

# Text that must come back as it was: ids, paths, prose and code that merely talk about secrets.
ORDINARY = [
    "#42 before Edit src/app.py",
    "restore 3f786850e387550fdab836ed7e6dc881de23001b over "
    "9a271f2a916b0b6ee6cecb2426f0b3206ef074578be55d9bc94f6f3fe3ab86aa",
    '{"head": "3f786850e387550fdab836ed7e6dc881de23001b", "session": "4f9e2c1a-7b3d-4e5f-9a8b-1c2d3e4f5a6b"}',
    "toolu_01ABcDeFgHiJkLmNoPqRsTuV and msg_2130d7dc9001jCu6WZTO5lkSCi and evt_2130d7ca6002zxS4Uy0RY49VXA",
    "/home/dev/.claude/projects/-home-dev-app/4f9e2c1a-7b3d-4e5f-9a8b-1c2d3e4f5a6b.jsonl",
    "add error handling to the password reset form; the secret is in the details",
    "def check(password: str) -> bool:\n    return hmac.compare_digest(hash(password), stored)\n",
    'password = os.environ["DB_PASSWORD"]\ntoken = get_token()\nsecret = "${SECRET}"\n',
    "export DB_PASSWORD=$DB_PASSWORD\nMAX_TOKENS=4096\n",
    "self.token = token\nsecret = derive(key2)\nif password == other2:\ntimeout_token=30\nkey = 123456\n",
    "see https://example.com/docs?page=2#auth and git@github.com:org/repo.git",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKd2cmU3Tq3oH0lJq3r4m4xR5t6y7u8i9o0pA1sD2fG3 dev@laptop",
]


def test_each_secret_shape_becomes_its_marker_and_its_value_is_gone() -> None:
    for kind, secret, line in SECRETS:
        text = f"before\n{line}\nafter"
        out, findings = redact.redact_text(text, where="prompt")
        assert secret not in out, (kind, out)
        assert f"[REDACTED:{kind}]" in out, (kind, out)
        assert redact.Finding(kind, "prompt") in findings
        assert out.startswith("before\n") and out.endswith("\nafter")


def test_every_other_detect_secrets_shape_goes_too() -> None:
    for kind, secret, line in MORE_SHAPES:
        out, findings = redact.redact_text(f"before\n{line}\nafter")
        assert secret not in out and findings, (kind, out)
        first = line.split("\n")[0]  # the detector itself fires (the marker may name another that overlaps)
        assert kind in {det.kind for det in redact._detectors("OTHER") if list(redact._scan_line(first, 0, det))}


def test_a_token_matched_by_its_start_goes_whole() -> None:
    """detect-secrets matches 24 characters of a Stripe key and a JWT without its signature."""
    for kind in ("Stripe Access Key", "JSON Web Token"):
        secret = next(s for k, s, _ in SECRETS if k == kind)
        out, _ = redact.redact_text(f"x {secret} y")
        assert out == f"x [REDACTED:{kind}] y"


def test_a_password_in_a_url_goes_and_the_rest_of_the_url_stays() -> None:
    out, findings = redact.redact_text("git clone https://alice:Tr0ub4dor-3x@git.example.com/team/app.git")
    assert out == "git clone https://alice:[REDACTED:Basic Auth Credentials]@git.example.com/team/app.git"
    assert findings == [redact.Finding("Basic Auth Credentials", "text")]


@pytest.mark.parametrize("key", KEYS, ids=lambda k: k.split("\n")[0].strip("-"))
def test_a_private_key_block_goes_whole(key: str) -> None:
    out, findings = redact.redact_text(f"my key:\n{key}\nthanks")
    assert out == "my key:\n[REDACTED:Private Key]\nthanks"
    assert [f.kind for f in findings] == ["Private Key"]


def test_a_private_key_cut_short_goes_as_far_as_its_lines_look_like_a_key() -> None:
    out, _ = redact.redact_text(f"pasted:\n-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}")
    assert out == "pasted:\n[REDACTED:Private Key]"
    out, _ = redact.redact_text(f"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\n{KEY_BODY}and then")
    assert out == "[REDACTED:Private Key]\nand then"
    code = '_SK_MAGIC = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n_SK_START = 42\n'
    assert redact.redact_text(code)[0] == '_SK_MAGIC = b"[REDACTED:Private Key]\n_SK_START = 42\n'


def test_a_secret_seen_once_goes_everywhere_it_appears() -> None:
    text = 'password = "Hunter2-horse-42"\nlater I typed Hunter2-horse-42 again'
    out, findings = redact.redact_text(text)
    assert "Hunter2-horse-42" not in out and len(findings) == 2


def test_ordinary_text_ids_paths_and_code_come_back_unchanged() -> None:
    for text in ORDINARY:
        assert redact.redact_text(text) == (text, []), text


def test_this_repositorys_own_commit_messages_come_back_unchanged() -> None:
    """Real prose full of oids, paths, code and talk of secrets and redaction."""
    log = subprocess.run(["git", "log", "-n", "2000", "--format=%B%x00"], cwd=ROOT, capture_output=True, text=True)
    messages = [m for m in log.stdout.split("\0") if m.strip()]
    if not messages:
        pytest.skip("not run from a git clone")
    changed = [m for m in messages if redact.redact_text(m)[1]]
    assert changed == []


def test_redacting_twice_is_redacting_once() -> None:
    text = "\n".join([line for _, _, line in SECRETS] + KEYS + ORDINARY)
    once, findings = redact.redact_text(text)
    assert findings
    assert redact.redact_text(once) == (once, [])


# The prefilter --------------------------------------------------------------------------------


def test_the_prefilter_loses_no_finding_on_the_planted_secrets_and_samples() -> None:
    lines = [line for _, _, line in SECRETS + MORE_SHAPES]
    texts = lines + [line.upper() for line in lines] + [line.lower() for line in lines] + KEYS + ORDINARY
    texts += [p.read_text(errors="replace") for p in SAMPLES]
    for text in texts:
        assert spans(text, every_line=True) == spans(text, every_line=False)


FRAGMENTS = [line for _, _, line in SECRETS + MORE_SHAPES] + [
    "password", "=", ":", '"', "'", " ", "\r", "\n", "\t", "-----", "BEGIN RSA PRIVATE KEY", "://u:", "@", "aws",
    "AKIA", "eyJ", ".", "pa\u017fsword", "api_\u212aey", "\u00e9", "SECRET_KEY="]


def test_every_detector_has_a_trigger() -> None:
    """A plugin a newer detect-secrets adds would scan every line: correct, but slow enough to notice."""
    for table in ("OTHER", "PYTHON", "YAML"):
        assert all(det.trigger for det in redact._detectors(table))


def test_case_folding_does_not_hide_a_keyword_from_the_prefilter() -> None:
    """re's IGNORECASE matches the long s and the Kelvin sign to s and k; the trigger search must too."""
    for text in ['pa\u017fsword = "Zx9mQ2kL77"', '\u00e9 api_\u212aey = "Zx9mQ2kL77"\n\u00e9']:
        assert spans(text, every_line=False) == spans(text, every_line=True) != []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=12), max_size=30))
def test_the_prefilter_finds_what_scanning_every_line_finds(parts: list[str]) -> None:
    text = "".join(parts)
    assert spans(text, every_line=True) == spans(text, every_line=False)


def spans(text: str, every_line: bool) -> list[tuple[int, int, str]]:
    return [(h.start, h.end, h.kind) for h in redact._scan(text, every_line=every_line)]


# The property the servers' tests check --------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(before=st.text(max_size=80), after=st.text(max_size=80), planted=st.sampled_from(SECRETS + [
    ("Private Key", key, key) for key in KEYS]))
def test_a_planted_secret_never_survives_and_redaction_is_idempotent(
        before: str, after: str, planted: tuple[str, str, str]) -> None:
    _kind, secret, line = planted
    text = f"{before}{line}{after}"  # glued to the random text, no line break to help
    once, findings = redact.redact_text(text)
    assert secret not in once
    assert findings
    assert redact.redact_text(once) == (once, [])


# Transcripts ----------------------------------------------------------------------------------


def test_sample_transcripts_stay_byte_identical_where_nothing_is_secret() -> None:
    assert SAMPLES
    for path in SAMPLES:
        raw = path.read_bytes()
        out, findings = redact.redact_transcript(raw)
        before, after = raw.split(b"\n"), out.split(b"\n")
        assert len(before) == len(after)
        for old, new in zip(before, after, strict=True):
            if old != new:  # a line that held something secret still parses, with the same keys
                assert json.loads(old).keys() == json.loads(new).keys()
        assert len([1 for old, new in zip(before, after, strict=True) if old != new]) <= len(findings)


def claude_line(text: str, uuid: str) -> bytes:
    entry = {"type": "user", "uuid": uuid, "parentUuid": None, "sessionId": "4f9e2c1a",
             "message": {"role": "user", "content": [{"type": "text", "text": text}]},
             "cwd": "/home/dev/app", "timestamp": "2026-11-22T10:00:00.000Z"}
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode()


def test_planted_secrets_leave_a_transcript_and_only_their_lines_change() -> None:
    key = KEYS[1]
    lines = [
        claude_line("hello, add a README", "u1"),
        claude_line(f"use {SECRETS[0][1]} and {SECRETS[7][1]} — “quoted” é", "u2"),
        claude_line(f'config:\n{key}\npassword = "{SECRETS[13][1]}"', "u3"),
        b'{"type":"assistant","uuid":"u4","message":{"content":"done \\u00e9"}}',
        b"not json: curl https://bob:Sup3r-s3cret@api.example.com",
        b'{"type":"tool","uuid":"u5","out":"\\u0041KIAZ7QRT3XLPM4KWN2B"}',
    ]
    raw = b"\n".join(lines) + b"\n"
    out, findings = redact.redact_transcript(raw)
    for secret in [SECRETS[0][1], SECRETS[7][1], SECRETS[13][1], "Sup3r-s3cret", "MIIEpAIBAAKCAQEA3Tz2mr7"]:
        assert secret.encode() not in out
    assert b"\\u0041KIAZ7QRT3XLPM4KWN2B" not in out  # found in the decoded string, not in the raw bytes
    new = out.split(b"\n")
    assert new[0] == lines[0] and new[3] == lines[3] and new[6] == b""
    for line in (new[1], new[2], new[5]):
        json.loads(line)
    assert json.loads(new[1])["uuid"] == "u2" and "é" in json.loads(new[1])["message"]["content"][0]["text"]
    assert json.loads(new[2])["message"]["content"][0]["text"] == (
        'config:\n[REDACTED:Private Key]\npassword = "[REDACTED:Secret Keyword]"')
    assert new[4] == b"not json: curl https://bob:[REDACTED:Basic Auth Credentials]@api.example.com"
    assert {f.kind for f in findings} >= {"AWS Access Key", "OpenAI Token", "Private Key", "Secret Keyword",
                                          "Basic Auth Credentials"}
    assert redact.redact_transcript(out) == (out, [])


def test_a_secret_found_in_one_line_goes_from_every_line() -> None:
    raw = b"\n".join([claude_line('password = "Hunter2-horse-42"', "u1"), claude_line("ok", "u2"),
                      claude_line("I said Hunter2-horse-42 earlier", "u3"), b"plain Hunter2-horse-42"])
    out, findings = redact.redact_transcript(raw)
    assert b"Hunter2-horse-42" not in out and len(findings) == 3
    assert out.split(b"\n")[1] == claude_line("ok", "u2")


def test_a_value_that_is_a_secret_by_its_key_goes_whole() -> None:
    """`{"password": "hunter2"}`: the keyword plugin sees the key and the value only together."""
    raw = (b'{"uuid":"u1","input":{"env":{"DB_PASSWORD":"hunter2","HOME":"/home/dev"},"apiKey":"sk-mock-123"}}\n'
           b'{"uuid":"u2","text":"hunter2 is also my cat"}\n')
    out, findings = redact.redact_transcript(raw)
    lines = out.split(b"\n")
    assert json.loads(lines[0]) == {"uuid": "u1", "input": {"env": {"DB_PASSWORD": "[REDACTED:Secret Keyword]",
                                                                    "HOME": "/home/dev"},
                                                            "apiKey": "[REDACTED:Secret Keyword]"}}
    assert lines[1] == b'{"uuid":"u2","text":"hunter2 is also my cat"}'  # too short to chase everywhere
    assert len(findings) == 2
    document = json.dumps({"settings": {"password": "hunter2", "name": "app"}}, indent=4).encode()
    out, _ = redact.redact_transcript(document)
    assert out == document.replace(b'"hunter2"', b'"[REDACTED:Secret Keyword]"')  # its own layout kept


def test_a_secret_used_as_a_key_goes_too() -> None:
    raw = b'{"uuid":"u1","env":{"ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1":1}}'
    out, _ = redact.redact_transcript(raw)
    assert out == b'{"uuid":"u1","env":{"[REDACTED:GitHub Token]":1}}'


def test_a_key_spread_over_plain_lines_goes_whole() -> None:
    raw = (b'{"uuid":"a"}\n' + KEYS[0].encode() + b'\n{"uuid":"b"}\n')
    out, _ = redact.redact_transcript(raw)
    assert out == b'{"uuid":"a"}\n[REDACTED:Private Key]\n{"uuid":"b"}\n'


def test_a_transcript_that_is_one_json_document_is_redacted_as_one() -> None:
    chat = {"sessionId": "s1", "messages": [{"id": "m1", "content": "hi"},
                                            {"id": "m2", "content": f"token {SECRETS[2][1]}"}]}
    raw = json.dumps(chat, indent=2).encode() + b"\n"
    out, findings = redact.redact_transcript(raw)
    assert SECRETS[2][1].encode() not in out
    assert out == raw.replace(SECRETS[2][1].encode(), b"[REDACTED:GitHub Token]")
    assert [f.kind for f in findings] == ["GitHub Token"]
    clean = json.dumps({"messages": [{"content": "hi"}]}, indent=2).encode()
    assert redact.redact_transcript(clean) == (clean, [])


def test_bytes_that_are_not_utf8_survive() -> None:
    raw = b"\xff\xfe binary-ish line\n" + claude_line("fine", "u1") + b"\n"
    assert redact.redact_transcript(raw) == (raw, [])


# Files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [".env", "app/.env", ".env.local", ".env.production", "prod.env", "certs/server.pem",
                                  "tls.key", "id_rsa", ".ssh/id_ed25519", "keys/id_ecdsa", "store.p12", "a.pfx",
                                  "release.keystore", ".netrc", ".pgpass", "gcp/credentials.json",
                                  "client_secret.json", ".aws/credentials", ".git-credentials", ".kube/config"])
def test_names_that_are_secrets_files(path: str) -> None:
    assert redact.name_reason(path)


@pytest.mark.parametrize("path", [".env.example", ".env.sample", ".env.template", "id_rsa.pub", "keys/id_ed25519.pub",
                                  "src/env.py", "environment.yml", "config", "credentials.py", "README.md",
                                  "docs/keys.md", "monkey.py", ".envrc.md"])
def test_names_that_are_not(path: str) -> None:
    assert redact.name_reason(path) is None


def blobs(repo_path: Path, files: dict[str, bytes]) -> list[tuple[str, str]]:
    """(path, oid) of FILES, written as blobs into the repository at REPO_PATH."""
    entries = []
    for path, data in files.items():
        oid = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo_path, input=data, check=True,
                             capture_output=True).stdout.decode().strip()
        entries.append((path, oid))
    return entries


PROJECT = {
    "README.md": b"# app\n\nSet DB_PASSWORD in your environment.\n",
    "src/app.py": b"import os\n\nPASSWORD = os.environ['DB_PASSWORD']\n\n\ndef main() -> None:\n    print('hi')\n",
    "src/settings.py": b"DEBUG = True\nREGION = 'eu-west-1'\nKEY_ID = 'AKIAZ7QRT3XLPM4KWN2B'\n",
    "deploy/config.yaml": b"db:\n  host: db.internal\n  password: Hunter2-horse-42\n",
    ".env": b"SECRET=1\n",
    ".env.example": b"SECRET=\n",
    ".ssh/id_ed25519": KEYS[1].encode() + b"\n",
    ".ssh/id_ed25519.pub": b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKd2cmU3Tq3oH0lJq dev@laptop\n",
    "notes/key.txt": b"the deploy key:\n" + KEYS[0].encode() + b"\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0" + b"AKIAZ7QRT3XLPM4KWN2B",
    "bin/tool": b"\x7fELF\0\0\0ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1",
}


@pytest.mark.usefixtures("git_environ")
def test_secret_paths_names_each_secret_file_with_its_reason(repo: object, tmp_path: Path) -> None:
    path = tmp_path / "repo"
    entries = blobs(path, PROJECT)
    found = redact.secret_paths(Repo.discover(str(path)), entries)
    assert found == {
        ".env": "looks like a secrets file (.env)",
        ".ssh/id_ed25519": "private key",
        "src/settings.py": "detect-secrets: AWS Access Key on line 3",
        "deploy/config.yaml": "detect-secrets: Secret Keyword on line 3",
        "notes/key.txt": "detect-secrets: Private Key on line 2",
    }


@pytest.mark.usefixtures("git_environ")
def test_a_blob_is_scanned_once_ever(repo: object, tmp_path: Path) -> None:
    """The second call reads no blob: with every blob gone from the repository, it still answers the
    same, from the cache, which it leaves as it was; a new blob alone is read and added."""
    path = tmp_path / "repo"
    entries = blobs(path, PROJECT)
    rewind = Repo.discover(str(path))
    first = redact.secret_paths(rewind, entries)
    cache = Path(redact.cache_path(rewind))
    assert cache.parent == Path(rewind.share_dir)
    cached = cache.read_bytes()
    assert len(cached.splitlines()) == len(PROJECT) - 2  # .env and the key are left out by name, unread
    for _path, oid in entries:
        (path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    assert redact.secret_paths(rewind, entries) == first
    assert cache.read_bytes() == cached
    more = blobs(path, {"late.py": b"token = 'ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1'\n"})
    assert redact.secret_paths(rewind, entries + more)["late.py"] == "detect-secrets: GitHub Token on line 1"
    assert cache.read_bytes().startswith(cached) and len(cache.read_bytes().splitlines()) == len(PROJECT) - 1


@pytest.mark.usefixtures("git_environ")
def test_a_verdict_cut_short_by_a_kill_is_not_trusted(repo: object, tmp_path: Path) -> None:
    path = tmp_path / "repo"
    entries = blobs(path, {"src/settings.py": PROJECT["src/settings.py"]})
    rewind = Repo.discover(str(path))
    cache = Path(redact.cache_path(rewind))
    cache.parent.mkdir(parents=True)
    cache.write_text(f'{entries[0][1]} ".py"\t')  # "clean"? the record never got its end
    assert redact.secret_paths(rewind, entries) == {"src/settings.py": "detect-secrets: AWS Access Key on line 3"}
    for _path, oid in entries:
        (path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    assert redact.secret_paths(rewind, entries) == {"src/settings.py": "detect-secrets: AWS Access Key on line 3"}


def test_an_example_token_in_a_docstring_leaves_no_file_out_but_goes_from_text() -> None:
    line = "    https://example.com/protected?access_token=kjfch2345sdf   # Query"
    assert redact.scan_file("oauthlib/resource.py", f'"""\n{line}\n"""\n'.encode()) is None
    assert "kjfch2345sdf" not in redact.redact_text(line)[0]


@pytest.mark.usefixtures("git_environ")
def test_a_blob_the_repository_lacks_gets_no_verdict(repo: object, tmp_path: Path) -> None:
    path = tmp_path / "repo"
    rewind = Repo.discover(str(path))
    oid = blobs(path, {"x": PROJECT["src/settings.py"]})[0][1]
    (path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    assert redact.secret_paths(rewind, [("src/settings.py", oid)]) == {}
    blobs(path, {"x": PROJECT["src/settings.py"]})  # it arrives (a promisor remote, a fetch)
    assert redact.secret_paths(rewind, [("src/settings.py", oid)]) == {
        "src/settings.py": "detect-secrets: AWS Access Key on line 3"}


def test_the_cache_lives_where_share_keeps_its_caches(tmp_path: Path) -> None:
    rewind = Repo(str(tmp_path), str(tmp_path / ".git"), str(tmp_path / ".git"))
    assert os.path.dirname(redact.cache_path(rewind)) == rewind.share_dir


# The import -----------------------------------------------------------------------------------


def test_detect_secrets_is_imported_only_when_something_is_scanned() -> None:
    code = ("import sys\nfrom git_rewind.sharing import redact\nassert 'detect_secrets' not in sys.modules\n"
            "redact.redact_text('a ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1')\n"
            "assert 'detect_secrets' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_no_baseline_or_user_setting_changes_what_is_found(tmp_path: Path) -> None:
    """A .secrets.baseline allowlisting everything, where detect-secrets would look, is not read."""
    baseline = {"version": "1.5.0", "plugins_used": [], "filters_used": [
        {"path": "detect_secrets.filters.regex.should_exclude_line", "pattern": [".*"]}], "results": {}}
    (tmp_path / ".secrets.baseline").write_text(json.dumps(baseline))
    code = ("from git_rewind.sharing import redact\n"
            "print(redact.redact_text('a ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1')[0])\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}).stdout
    assert out == "a [REDACTED:GitHub Token]\n"


# Encoded secrets ------------------------------------------------------------------------------

AWS_LINE = 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vLk2Tn1"\n'


def _wrapped_base64(data: bytes) -> str:
    """DATA as the `base64` command prints it: lines of 76 characters."""
    import base64

    flat = base64.b64encode(data).decode()
    return "\n".join(flat[i:i + 76] for i in range(0, len(flat), 76))


def _encodings() -> list[tuple[str, str]]:
    import base64

    return [
        ("base64", base64.b64encode(AWS_LINE.encode()).decode()),
        ("base64", base64.urlsafe_b64encode(b"deploy token ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1").decode()),
        ("base64", _wrapped_base64(AWS_LINE.encode() * 3)),
        ("hex", AWS_LINE.encode().hex()),
        ("hex", "0x" + b"id=AKIAZ7QRT3XLPM4KWN2B".hex()),
    ]


@pytest.mark.parametrize(("how", "encoded"), _encodings())
def test_a_secret_encoded_in_base64_or_hex_is_found_in_text_and_files(how: str, encoded: str) -> None:
    text = f"config:\n{encoded}\nend\n"
    redacted, found = redact.redact_text(text)
    assert redacted.removeprefix("config:\n").removeprefix("0x").startswith("[REDACTED:"), redacted
    assert redacted.endswith(f" ({how})]\nend\n"), redacted
    assert len(found) == 1 and found[0].kind.endswith(f"({how})")
    verdict = redact.scan_file("deploy/blob.txt", text.encode())
    assert verdict is not None and verdict.endswith(f" ({how}) on line 2")


def test_encoded_runs_that_hold_no_secret_stay() -> None:
    """Hashes, images, ids and identifiers decode to no text; text that holds no secret is left as it is."""
    import base64
    import hashlib

    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    harmless = [
        f'"integrity": "sha512-{base64.b64encode(hashlib.sha512(b"x").digest()).decode()}"',
        f"background: url(data:image/png;base64,{base64.b64encode(png).decode()})",
        f"commit {hashlib.sha1(b'x').hexdigest()} tree {hashlib.sha256(b'x').hexdigest()}",
        "AbstractSingletonProxyFactoryBeanTransactionManager",
        _wrapped_base64(b"nothing to see here, just a long enough sentence of ordinary words. " * 4),
        b"an ordinary sentence, nothing else".hex(),
    ]
    for line in harmless:
        assert redact.redact_text(line) == (line, []), line
        assert redact.scan_file("data.txt", line.encode()) is None, line


def test_a_path_whose_name_holds_a_secret_is_named_with_its_kind() -> None:
    token = "ghp_R8f3kQz1Lm0XcV7bN2pW9yT4sA6dJ5hG3uE1"
    paths = ["src/app.py", f"backup-{token}.txt", f"cache/{token}/data.json", "keys/README.md", "tokens/parse.py"]
    assert redact.secret_names(paths) == {f"backup-{token}.txt": "GitHub Token",
                                          f"cache/{token}/data.json": "GitHub Token"}
    assert redact.shown_path(f"cache/{token}/data.json") == "cache/[REDACTED:GitHub Token]/data.json"
    assert redact.secret_names([]) == {}
