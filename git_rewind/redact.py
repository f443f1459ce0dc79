"""Stand-in for the secret scanner while the redact branch is built: catches AWS keys and .env files only.

Replaced by the detect-secrets based module when that branch merges (the interface is the same)."""
from __future__ import annotations

import re


class Finding:
    __slots__ = ("kind", "where")

    def __init__(self, kind: str, where: str) -> None:
        self.kind = kind
        self.where = where


MARKER = "[REDACTED:{kind}]"
_AWS = re.compile(r"AKIA[0-9A-Z]{16}")


def redact_text(text: str) -> tuple[str, list[Finding]]:
    found = [Finding("AWS Access Key", "") for _ in _AWS.finditer(text)]
    return _AWS.sub(MARKER.format(kind="AWS Access Key"), text), found


def redact_transcript(raw: bytes) -> tuple[bytes, list[Finding]]:
    text, found = redact_text(raw.decode("utf-8", "surrogateescape"))
    return text.encode("utf-8", "surrogateescape"), found


def secret_paths(repo: object, entries: list[tuple[str, str]]) -> dict[str, str]:
    return {p: "looks like a secrets file (.env)" for p, _ in entries if p.rsplit("/", 1)[-1] == ".env"}
