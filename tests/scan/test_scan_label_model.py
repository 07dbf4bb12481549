"""Issue 27: secrets as people write them (the label model), and no alarms on real code.

Every shape the issue lists in its §4-§6 is here, with values built at run time
(random, so no file in the suite holds a literal secret). Negatives are the real
lines the issue and ``bench/scan_real.py`` met in vendored code and memories.
"""

from __future__ import annotations

import random
import string
import uuid

import pytest

from teamsync.security import _labels
from teamsync.security.secrets import scan_text

PUNCT = "!#%&*+-=?@^_"


def _password(seed: int) -> str:
    g = random.Random(seed)
    while True:
        value = g.choice(string.ascii_letters) + "".join(
            g.choice(string.ascii_letters + string.digits + PUNCT) for _ in range(13)
        )
        if any(c.isdigit() for c in value) and any(c.islower() for c in value):
            return value


def _token(seed: int, n: int = 32) -> str:
    g = random.Random(seed)
    while True:
        value = "".join(g.choice(string.ascii_letters + string.digits) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value):
            return value


def _hex(seed: int, n: int) -> str:
    g = random.Random(seed)
    return "".join(g.choice("0123456789abcdef") for _ in range(n))


def found(text: str, path: str = "team/notes.md") -> list[str]:
    return [f.rule for f in scan_text(text, path)]


SHAPES = [
    # issue 27, round 2: label and value in any order, words between, bold labels
    "- **Passwort:** `{p}`",
    "- **비번:** `{p}`",
    "Ich habe {p} als Initialpasswort gesetzt, bitte nach dem ersten Login ändern.",
    "Ustawiłem {p} jako hasło tymczasowe, zmień po pierwszym logowaniu.",
    "Ho impostato {p} come password provvisoria, cambiala al primo accesso.",
    "{p} şifresiyle root olarak girip servisi yeniden başlattım.",
    "ตั้งรหัสผ่านชั่วคราวเป็น {p} ไว้ ล็อกอินครั้งแรกแล้วเปลี่ยนด้วยนะ",
    "Redis का पासवर्ड incident के दौरान बदलकर {p} कर दिया।",
    "For the warehouse, the credentials (user `etl_loader`) use {p} as the password.",
    "The API token for svc-jenkins is {h40}.",
    "Jenkins の API トークンは {h32}、ユーザーは svc-jenkins。",
    "The alarm panel is disarmed with PIN {pin}.",
    "서버실 출입 비밀번호(도어락)는 {pin}번입니다.",
    "Gmail app password: {app}",
    "Clé secrète de l'API Scaleway : {uuid}",
    "| Grafana | admin | {p} |",
    "u/p for the old jira: svc_jira/{p}",
    "Креды от прод-кликхауса: default / {p}",
    "VPN のログイン情報は yamada.t と {p} の組み合わせです。",
    "관리자 계정 아이디 admin, 비밀번호 {p}",
    "微信小程序的 AppSecret 是 {h32}。",
    "Heslo k databázi je {p}, změním ho příští týden.",
    "הסיסמה לשרת היא {p}",
    "Ο κωδικός για τον server είναι {p}",
    "backup codes: {pin} 29471029",
    "sqlcmd -S db -U sa -P {p}",
    "htpasswd -b .htpasswd admin {p}",
    "ldapsearch -x -D cn=admin,dc=corp -w {p} -b dc=corp",
    "openssl pkcs12 -export -in a.crt -passout pass:{p}",
    "wget --user deploy --password={p} https://files.corp/x.tar",
    "The master key for the KeePass file is {p}",
    # §5: real memories the rules missed
    "cPanel pw is {p}",
    "Gmail app password: deploy@acme.io / {p}",
    "Client Secret (Production): {t}",
    "Token value: {t}",
    "Airtable {t64}",
    # §6: prose and colloquial forms
    "Mật khẩu của máy chủ X là {p}",
    "비번 {p}",
    "패스워드 {p} 사용",
    "{p} というパスワード",
    "暗証番号 {p}",
    "pw: {p}",
    "pass = {p}",
    "passwd {p}",
    "creds: deploy:{p}",
    "u: admin p: {p}",
    "mysql -u root -p{p} shop",
    "sshpass -p '{p}' ssh ops@10.0.0.5",
    "curl -u admin:{p} https://api.acme.io/v1/items",
    "redis-cli -a {p} ping",
    "Passwort für den Staging-Admin: {p}",
    "password for the staging admin: {p}",
    # §6: the colon labels that already worked keep working
    "mật khẩu: {p}",
    "비밀번호: {p}",
    "パスワード: {p}",
    "pwd={p}",
    # languages of the label model
    "كلمة المرور: {p}",
    "كلمة المرور هي {p}",
    "पासवर्ड: {p}",
    "सर्वर का पासवर्ड {p} है",
    "รหัสผ่าน: {p}",
    "รหัสผ่านคือ {p}",
    "hasło: {p}",
    "Hasło do bazy to {p}",
    "la password del server è {p}",
    "kata sandi: {p}",
    "Kata sandi server adalah {p}",
    "het wachtwoord is {p}",
    "wachtwoord: {p}",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_secrets_as_people_write_them_are_found(shape: str) -> None:
    seed = len(shape) * 7 + sum(map(ord, shape)) % 97
    g = random.Random(seed)
    text = shape.format(
        p=_password(seed), t=_token(seed), t64=_token(seed, 64), h32=_hex(seed, 32),
        h40=_hex(seed, 40), pin="".join(g.choice("0123456789") for _ in range(6)) + "7",
        app=" ".join("".join(g.choice(string.ascii_lowercase) for _ in range(4)) for _ in "abcd"),
        uuid=uuid.UUID(int=g.getrandbits(128)),
    )  # fmt: skip
    assert found(text), shape


def test_a_private_integration_token_beside_its_label() -> None:
    token = "pi" + "t-" + str(uuid.UUID(int=random.Random(4).getrandbits(128)))
    assert found(f"GHL PIT Token: {token}") == ["gohighlevel-private-integration-token"]


NOT_SECRETS = [
    # §4: real memories
    "Clave Redis: `event:{{id}}:stats`",
    "example: password=hunter2",
    "ssh key file: ~/.ssh/id_ed25519",
    "key path: /etc/ssl/private/server.key",
    "n8n credential ID: {t16}",
    "contract address: 0x{h40}",
    # §3: hex digests under non-secret labels
    "cache_key: {h32}",
    "cache_key: {h40}",
    "etag: {h40}",
    "checksum = {h64}",
    "sha: {h40}",
    '"initial": {{"key_sha256": "{h64}", "pos": 9}}',
    # §2 and bench/scan_real.py: real code in the standard library and site-packages
    'url = httpx.URL("HTTPS://jo%40email.com:a%20secret@m\u00fcller.de:1234/pa%20th")',
    "mhu = MultiHostUrl('https://foo.com:123,foo:bar@bar.com/path')",
    '"git://[path-to-repo[:]][ref@]path/to/file" (but the actual',
    '#                          urllib2.urlopen, "http://evil:thing@example.com")',
    "url: https://user:pass@example.com/path",
    "https://username:password@host/",
    "user = User(username='scolvin', password='password1')",
    '#> {{"password":"IAmSensitive","password_bytes":"IAmSensitiveBytes"}}',
    "password:yh^%#rest-of-my-password",
    'PASSWD = "test123"',
    'toolskey = "VS%0.f0COMNTOOLS" % version',
    'char *key = "__f2py_cb_#name#";',
    "key_node.tag = 'tag:yaml.org,2002:str'",
    "All other keyword arguments are passed on to `.Poly3DCollection`.",
    "PKCS8_PRIV_KEY_INFO = pkcs8_priv_key_info_st",
    'data = "key2=value2x&key3=value3&key4=value4"',
    "self.assertEqual(serialize(elem), '<tag key=\"\\xe5\\xf6\\xf6&lt;&gt;\" />')",
    # prose about secrets that gives none
    "To disable authentication, pass `False`.",
    "# Pin Accept-Encoding so it doesn't vary with zstd availability",
    "The password is kept in the team's 1Password vault.",
    "password rotation: every 90 days",
    "비밀번호는 1Password 팀 금고에 보관합니다.",
    "Passwords must be at least 12 characters long.",
    "the API key lives in .env and is never committed",
    # round 2: documentation examples, policies, dates, paths of words, headers, public keys
    "Password must contain at least one uppercase letter, e.g. Abc12345!",
    "PIN policy: 6 digits, changed every 90 days; last change 20240105.",
    "Cache-Control key: max-age=31536000",
    "La contraseña se guarda en AWS Secrets Manager bajo `prod/db/MainUser2`.",
    "パスワードは最低12文字、英大文字・小文字・数字を含めてください（例：Abcdefgh1234）。",
    "The webhook secret header is X-Hub-Signature-256.",
    "Public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk3bR9xYbQ2pLm8vN4cZ7wT1sK6dH0jF5aE9uP2qR3s",
    "A senha do banco fica no Secrets Manager, nome RdsMasterPassword2024.",
    "密码在 1Password 的「运维」保险库里，条目名 ProdMySQLRoot。",
    "v2.14.3-rc.78208 has the token refresh fix",
    "La petición 49bbb7592f7ccd952357b0ae9dffabfa devolvió token caducado (401).",
    "L'identifiant du tenant est f95b221e-8b70-4ccb-920c-32acfc8e17f2, ce n'est pas un secret.",
    "We used the pretrained [`nreimers/MiniLM-L6-H384-uncased`] model and a contrastive objective",
    "    key: PKCS12PrivateKeyTypes | None,",
]


@pytest.mark.parametrize("line", NOT_SECRETS)
@pytest.mark.parametrize("path", ["team/notes.md", "lib/module.py"])
def test_templates_paths_ids_hashes_and_examples_are_not_findings(line: str, path: str) -> None:
    g = random.Random(len(line))
    text = line.format(
        t16=_token(g.randrange(1000), 16),
        h32=_hex(g.randrange(1000), 32),
        h40=_hex(g.randrange(1000), 40),
        h64=_hex(g.randrange(1000), 64),
    )
    assert found(text, path) == [], line


def test_an_example_line_still_reports_a_random_looking_value() -> None:
    """``example:`` asks for randomness; it does not switch the scanner off."""
    assert found(f"example: password={_token(3, 20)}")
    assert found("example: password=hunter2") == []


def test_the_label_model_reads_prose_not_source_code() -> None:
    assert _labels.reads("team/deploy.md") and _labels.reads("notes") and _labels.reads("a.yml")
    assert not _labels.reads("pkg/module.py") and not _labels.reads("web/app.ts")
    line = f"cPanel pw is {_password(8)}"
    assert found(line, "team/n.md") and found(line, "src/n.py") == []


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("{id}:stats", "password", False),  # a template
        ("~/.ssh/id_rsa", "secret", False),  # a path
        ("server.pem", "secret", False),  # a key file
        ("0x" + "ab" * 20, "token", False),  # a public address
        (str(uuid.UUID(int=5)), "token", False),  # an id
        ("ab" * 20, "token", False),  # hex under a weak label: a digest
        ("hunter2", "password", False),  # a documentation example
        ("Accept-Encoding", "secret", False),  # words
        ("verbosity=0", "password", False),  # a keyword argument
        ("482913", "pin", True),  # a PIN is digits
        ("Xk9#mQ2vL7", "password", True),
    ],
)
def test_the_value_model(value: str, kind: str, expected: bool) -> None:
    assert _labels.credential_value(value, kind) is expected
