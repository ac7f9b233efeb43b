"""Command lines with their secrets masked, for what leaves the machine (the OTLP export).

A command line can carry a credential: `mysql --password=hunter2`, `curl -u me:pw`,
`API_KEY=… ./deploy`, `git clone https://me:token@host/repo`. `redact` masks, with `***`:

- assignments: the value of a `NAME=value` word whose name is written as an environment
  variable's (capitals, digits, `_`: `AWS_SECRET_ACCESS_KEY=***`), or whose name says it holds
  a secret wherever it stands (`password=`, `db_pass=`, `_authToken=`, `?token=`, `api-key=`,
  `secret`, `auth`, `credential`, `session`, `cookie`, `pwd`): the value, not the name, so the
  record still says what was set. Other `name=value` words are kept (`dd of=/dev/sda`,
  `kubectl -l app=web`, `chmod u=rwx`): they say what the command did;
- credential options, their value attached by `=` or as the next word: `--password`,
  `--passwd`, `--pass`, `--passphrase`, `--token`, `--api-key`, `--apikey`, `--secret`,
  `--client-secret`, `--access-token`, `--auth-token`, `--private-key`, `--otp`,
  `--token-code`, `--oauth2-bearer`, `--http-password`, `--http-passwd`, `--ftp-password`,
  `--proxy-password` (and their `_` spellings); Java's and OpenSSL's single-dash ones
  (`-storepass`, `-keypass`, `-srcstorepass`, `-deststorepass`, `-passphrase`) and OpenSSL's
  `pass:VALUE`;
- the short options that are a password for the tool they belong to: `mysql`/`mariadb`
  `-pPW`; `sshpass -p`; `redis-cli -a`; `mongo`/`mongosh -p`; `sqlcmd -P`; `ldapsearch` and
  the other ldap tools' `-w`; `docker`/`podman login -p`; `zip`/`unzip -P`; `7z -p`;
  `az login -p`; `twine -p`; `openssl -k`; the last operand of `htpasswd -b`; the password
  of `-u`/`--user`/`--proxy-user USER:PASSWORD`, of `smbclient -U USER%PASSWORD` and of
  `lftp -u USER,PASSWORD`; the token of `vault login TOKEN`;
- the value of `config set KEY VALUE` (`aws configure set`, `npm config set`) for a key that
  names a secret, token, key, password or auth;
- an `Authorization:`, `Proxy-Authorization:`, `Cookie:`, `Private-Token:`, `Api-Key:` or
  `X-…-Key/Token/Secret/Auth:` header's value, and a JSON member named like a secret
  (`{"password": "***"}`);
- the password of a URL's `user:password@` (or `:password@`);
- tokens of well-known shapes wherever they stand (GitHub's `ghp_…` and `github_pat_…`, AWS key
  ids, Slack's `xox?-…`, `sk-…`, Stripe's `sk_live_…`, GitLab's `glpat-…`, PyPI's `pypi-…`,
  npm's `npm_…`, Vault's `hvs.…`, JWTs `eyJ….….…`).

It is a best effort over text, not a parser: a secret that is none of these shapes (a password
as a plain operand of a tool not named here, one piped in: `echo PW | docker login
--password-stdin`, or inside a heredoc's body) goes through. That is why the export also
offers `none`, which sends no command line at all.
"""

from __future__ import annotations

import re

MASK = "***"

CREDENTIAL_OPTIONS = (
    "password", "passwd", "pass", "passphrase", "token", "api-key", "apikey", "secret", "client-secret",
    "access-token", "auth-token", "private-key", "otp", "token-code", "oauth2-bearer", "http-password",
    "http-passwd", "ftp-password", "proxy-password",
)  # fmt: skip
SINGLE_DASH_OPTIONS = ("storepass", "keypass", "srcstorepass", "deststorepass", "srckeypass", "destkeypass", "passphrase")
SECRET_NAME = r"[\w.-]*(?:pass(?:wd|word)?|secret|token|api[_-]?key|auth|credential|session|cookie|pwd)[\w.-]*"

# one word's value: quoted parts and plain characters, one after the other (`'it''s'`, `a"b c"`)
_VALUE = r"""(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'";&|<>()])+"""
_SEGMENT = r"[^;&|\n]*?"  # the rest of one command of the line, up to the option

_OPTION_NAMES = "|".join(re.escape(o).replace("\\-", "[-_]") for o in sorted(CREDENTIAL_OPTIONS, key=len, reverse=True))
# (tools, their option that is a password): masked only in a command of that tool
_TOOL_OPTIONS = (
    (r"sshpass", r"-p"), (r"redis-cli", r"-a"), (r"mongo(?:sh)?", r"-p"), (r"sqlcmd", r"-P"),
    (r"ldap(?:search|add|modify|delete|passwd|compare|modrdn|whoami)", r"-w"), (r"(?:docker|podman) login", r"-p"),
    (r"(?:zip|unzip)", r"-P"), (r"az login", r"-p"), (r"twine(?: upload)?", r"-p"), (r"openssl", r"-k"),
)  # fmt: skip


def _tool_rule(tools: str, option: str) -> tuple[re.Pattern, str]:
    pattern = rf"(\b{tools}\b{_SEGMENT}\s{option}(?:\s+|=)?)(?!-){_VALUE}"
    return re.compile(pattern), r"\1" + MASK


_RULES = (
    # a header's value: `-H 'Authorization: Bearer abc'` (unquoted, up to the next option or URL)
    (
        re.compile(
            r"(?i)\b((?:proxy-)?authorization|cookie|private-token|api-?key|x-[a-z0-9-]*(?:key|token|secret|auth)[a-z0-9-]*)"
            r"(\s*:\s*)[^'\"\n;&|]+?(?=\s+(?:-|[a-z]+://)|['\"\n;&|]|$)"
        ),
        r"\1\2" + MASK,
    ),
    # a JSON member named like a secret: {"password": "…"}
    (re.compile(rf'(?i)("{SECRET_NAME}"\s*:\s*)"(?:[^"\\]|\\.)*"'), r'\1"' + MASK + '"'),
    # a URL's password: scheme://user:password@host (the password may hold an @)
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@'\"]*:)[^\s/'\"]*@"), r"\1" + MASK + "@"),
    # credential options and their value, as the next word or after `=`
    (re.compile(rf"(?i)(?<![\w-])(--(?:{_OPTION_NAMES}))(\s+|=)(?!-){_VALUE}"), r"\1\2" + MASK),
    (re.compile(rf"(?<![\w-])(-(?:{'|'.join(SINGLE_DASH_OPTIONS)}))(\s+|=)(?!-){_VALUE}"), r"\1\2" + MASK),
    (re.compile(r"(?<![\w-])(pass:)" + _VALUE), r"\1" + MASK),
    # -u/--user/--proxy-user USER:PASSWORD, smbclient -U USER%PASSWORD, lftp -u USER,PASSWORD
    (re.compile(r"(?<![\w-])(-u\s*|--(?:proxy-)?user(?:\s+|=))([^\s'\":,]+[:,])(?!//)" + _VALUE), r"\1\2" + MASK),
    (re.compile(r"(\bsmbclient\b" + _SEGMENT + r"\s-U\s*[^\s%]+%)" + _VALUE), r"\1" + MASK),
    # mysql's -pPASSWORD (attached only: `-p` alone asks for it)
    (re.compile(r"(\b(?:mysql|mariadb|mysqldump|mysqladmin)\b" + _SEGMENT + r"\s-p)" + _VALUE), r"\1" + MASK),
    (re.compile(r"(\b7zz?a?r?\b" + _SEGMENT + r"\s-p)" + _VALUE), r"\1" + MASK),
    *(_tool_rule(tools, option) for tools, option in _TOOL_OPTIONS),
    # htpasswd -b[c…] FILE USER PASSWORD, vault login TOKEN
    (re.compile(r"(\bhtpasswd\s+(?:-\w+\s+)*-\w*b\w*\s+(?:-\w+\s+)*\S+\s+\S+\s+)" + _VALUE), r"\1" + MASK),
    (re.compile(r"(\bvault\s+login\s+(?:-\S+\s+)*)(?![-\w]+=)(?!-)" + _VALUE), r"\1" + MASK),
    # aws configure set, npm config set: KEY VALUE for a key that names a secret
    (re.compile(r"(?i)(\bconfig(?:ure)?\s+set\s+\S*(?:secret|token|key|password|auth)\S*\s+)" + _VALUE), r"\1" + MASK),
    # NAME=value: a name that says it holds a secret, wherever it stands; an environment-style one
    (re.compile(rf"(?i)(?<![\w-])({SECRET_NAME}=)" + _VALUE), r"\1" + MASK),
    (re.compile(r"(?<![^\s;&|(`'\"])([A-Z_][A-Z0-9_]*=)" + _VALUE), r"\1" + MASK),
    # tokens of well-known shapes
    (
        re.compile(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|A(?:KIA|SIA)[0-9A-Z]{16}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"
            r"|glpat-[A-Za-z0-9_-]{20,}|pypi-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}|hvs\.[A-Za-z0-9_-]{20,}"
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
