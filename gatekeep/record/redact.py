"""Command lines with their secrets masked, for what leaves the machine (the OTLP export).

A command line can carry a credential: `mysql --password=hunter2`, `curl -u me:pw`,
`API_KEY=… ./deploy`, `git clone https://me:token@host/repo`. `redact` masks, with `***`:

- the value of every `NAME=value` assignment (and of a URL query's `?name=value`): the value, not
  the name, so `AWS_SECRET_ACCESS_KEY=***` still says what was set; an option's `--flag=value`
  only for the credential options below;
- the value after a credential option, attached by `=` or as the next word: `--password`,
  `--passwd`, `--pass`, `--token`, `--api-key`, `--apikey`, `--secret`, `--client-secret`,
  `--access-token`, `--auth-token`, `--private-key`, `--otp`, `--http-password`,
  `--ftp-password`, `--proxy-password` (and their `_` spellings); the password of curl's and
  wget's `-u`/`--user`/`--proxy-user USER:PASSWORD`; mysql's (and mariadb's, mysqldump's,
  mysqladmin's) `-pPASSWORD`; the value of `aws configure set` for a key, secret or token;
- an `Authorization:`, `Proxy-Authorization:`, `Cookie:` or `X-Api-Key:`-style header's value;
- the password of a URL's `user:password@`;
- tokens of well-known shapes wherever they stand (GitHub's `ghp_…`, AWS key ids `AKIA…`,
  Slack's `xox?-…`, OpenAI-style `sk-…`, GitLab's `glpat-…`, JWTs `eyJ….….…`).

It is a best effort over text, not a parser: a secret that is none of these shapes (a password
given as the second operand of a tool gatekeep has never heard of, or inside a heredoc's body)
goes through. That is why the export also offers `none`, which sends no command line at all.
"""

from __future__ import annotations

import re

MASK = "***"

CREDENTIAL_OPTIONS = (
    "password", "passwd", "pass", "token", "api-key", "apikey", "secret", "client-secret", "access-token",
    "auth-token", "private-key", "otp", "http-password", "ftp-password", "proxy-password",
)  # fmt: skip
_OPTION_NAMES = "|".join(re.escape(o).replace("\\-", "[-_]") for o in sorted(CREDENTIAL_OPTIONS, key=len, reverse=True))
_VALUE = r"""(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'";&|<>()]+)"""

_RULES = (
    # a header's value: `-H 'Authorization: Bearer abc'`
    (re.compile(r"(?i)\b((?:proxy-)?authorization|cookie|x-[a-z0-9-]*(?:key|token|secret)[a-z0-9-]*)(\s*:\s*)[^'\"\n]+"), r"\1\2" + MASK),
    # a URL's password: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@'\"]+:)[^\s/@'\"]+@"), r"\1" + MASK + "@"),
    # a credential option and its value, as the next word or after `=`
    (re.compile(rf"(?i)(?<![\w-])(--(?:{_OPTION_NAMES}))(\s+|=)(?!-){_VALUE}"), r"\1\2" + MASK),
    # curl's and wget's -u/--user/--proxy-user USER:PASSWORD, attached or not
    (re.compile(r"(?<![\w-])(-u\s*|--(?:proxy-)?user(?:\s+|=))([^\s'\":]+:)" + _VALUE), r"\1\2" + MASK),
    # mysql's -pPASSWORD (attached only: `-p` alone asks for it)
    (re.compile(r"(\b(?:mysql|mariadb|mysqldump|mysqladmin)\b[^;&|\n]*?\s-p)" + _VALUE), r"\1" + MASK),
    # aws configure set aws_secret_access_key VALUE
    (re.compile(r"(?i)(\bconfigure\s+set\s+\S*(?:secret|token|key|password)\S*\s+)" + _VALUE), r"\1" + MASK),
    # NAME=value: an assignment's value (and a URL query's), never an option's `--flag=value`
    (re.compile(r"(?<![\w./:@%-])([A-Za-z_][A-Za-z0-9_]*=)" + _VALUE), r"\1" + MASK),
    # tokens of well-known shapes
    (
        re.compile(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|A(?:KIA|SIA)[0-9A-Z]{16}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|glpat-[A-Za-z0-9_-]{20,}"
            r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
        ),
        MASK,
    ),
)


def redact(text: str) -> str:
    """`text` with the secrets of the forms above masked (module docstring)."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
