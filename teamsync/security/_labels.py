"""The label model: a secret named in any language, however it is written, and a value model.

The generic pattern (:func:`teamsync.security.rules.generic_line`) reads the
assignment shapes (``password: V``, ``DB_PASSWORD=V``, ``비밀번호는 V``). People
write credentials in other shapes too, and this module reads them on the lines
the pattern left without a candidate:

- **a label** from :data:`LABELS` (per language, informal and abbreviated forms
  included: ``pw``, ``pwd``, ``passwd``, ``creds``, ``비번``, ``暗証番号``,
  ``hasło``, ``kata sandi``, ``كلمة المرور``, ``पासवर्ड``, ``รหัสผ่าน``…),
  then up to :data:`BRIDGE_WORDS` words between it and the value (``password for
  the staging admin: V``, ``Mật khẩu của máy chủ X là V``, ``Client Secret
  (Production): V``), then a separator (``:``, ``=``, a dash, a copula of the
  language, a particle) or, straight after the label, only a space when the
  value looks like a credential (``비번 V``, ``passwd V``, ``暗証番号 V``);
- **value before label** where a language puts it there (``V というパスワード``);
- **pairs**: ``u: admin p: V``, ``creds: deploy:V``, ``login: user / V``;
- **command lines**: ``mysql -pV``, ``sshpass -p V``, ``curl -u user:V``,
  ``redis-cli -a V``;
- **known shapes beside a provider's or a token word**: a long high-entropy
  token on a line that names a token, key or secret, or a provider.

Every value goes through one value model (:func:`credential_value`), the same
for every script: it refuses templates, paths and key-file names, URLs, ids
(UUIDs, public addresses), hashes under a digest label, placeholders and words,
and asks a weak label (token, key) for a random-looking value. An ``example:``
line (in any language) asks every value to be random-looking. The candidates
go on to detect-secrets like the pattern's, so every language meets the same
filters.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from itertools import islice

from teamsync.security._generic import DIRECT_KEY
from teamsync.security._prefilter import literal_heads
from teamsync.security.rules import (
    _r,
    caseless_fold,
    generic_value_plausible,
    generic_value_random,
    looks_like_placeholder,
)

# kind: "password" (strong), "secret" (strong), "token" (weak: needs a random value),
# "pin" (strong, digits allowed).
LABELS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "password": ("password", "passwd", "passwort", "passcode", "pwd", "pw",
                     "pass", "login password", "app password", "wifi key", "wi-fi key",
                     "wlan key", "network key", "master key", "master password"),
        "secret": ("secret", "client secret", "secret key", "creds", "cred", "credentials",
                   "credential", "private key", "u/p", "user/pass", "login/pass", "login"),
        "token": ("token", "api key", "apikey", "api token", "access key", "auth key",
                  "token value", "bearer", "pat", "key", "tok"),
        "pin": ("pin", "pin code", "backup code", "backup codes", "recovery code",
                "recovery codes"),
    },
    "vi": {
        "password": ("mật khẩu", "mat khau", "mk", "pass"),
        "secret": ("khóa bí mật", "mã bí mật", "bí mật"),
        "token": ("khóa api", "mã truy cập", "token truy cập", "khóa"),
        "pin": ("mã pin",),
    },
    "ar": {
        "password": ("كلمة المرور", "كلمة السر", "كلمه المرور", "كلمه السر", "رمز المرور",
                     "الباسورد", "باسورد", "كلمة مرور"),
        "secret": ("المفتاح السري", "مفتاح سري", "السر"),
        "token": ("رمز الوصول", "مفتاح api", "رمز api", "مفتاح الوصول", "التوكن", "توكن", "الرمز المميز",
                  "المفتاح", "مفتاح"),
        "pin": ("الرقم السري", "رقم سري", "الرمز السري"),
    },
    "hi": {
        "password": ("पासवर्ड", "कूटशब्द", "पासवर्ड़", "पास वर्ड"),
        "secret": ("गुप्त कुंजी", "सीक्रेट", "गुप्त"),
        "token": ("टोकन", "एपीआई कुंजी", "api कुंजी", "एक्सेस टोकन", "कुंजी", "की"),
        "pin": ("पिन",),
    },
    "th": {
        "password": ("รหัสผ่าน", "พาสเวิร์ด", "รหัส", "พาส"),
        "secret": ("คีย์ลับ", "ความลับ", "ซีเคร็ต"),
        "token": ("โทเค็น", "โทเคน", "คีย์ api", "คีย์"),
        "pin": ("รหัส pin", "พิน"),
    },
    "pl": {
        "password": ("hasło", "hasła", "haslo", "hasla", "hasłem", "haslem"),
        "secret": ("sekret", "tajny klucz", "klucz tajny", "dane logowania"),
        "token": ("token dostępu", "klucz api", "klucz dostępu", "klucz"),
        "pin": ("kod pin",),
    },
    "it": {
        "password": ("password", "parola d'ordine", "parola chiave", "psw"),
        "secret": ("chiave segreta", "segreto", "credenziali"),
        "token": ("token di accesso", "chiave api", "chiave di accesso", "chiave"),
        "pin": ("codice pin",),
    },
    "id": {
        "password": ("kata sandi", "katasandi", "sandi", "kata laluan"),
        "secret": ("kunci rahasia", "rahasia", "kredensial"),
        "token": ("token akses", "kunci api", "kunci akses", "kunci"),
        "pin": ("kode pin",),
    },
    "nl": {
        "password": ("wachtwoord", "ww", "paswoord"),
        "secret": ("geheime sleutel", "geheim", "inloggegevens"),
        "token": ("toegangstoken", "api-sleutel", "api sleutel", "sleutel"),
        "pin": ("pincode",),
    },
    "ko": {
        "password": ("비밀번호", "비번", "패스워드", "암호", "패스"),
        "secret": ("비밀 키", "비밀키", "시크릿", "시크릿 키"),
        "token": ("토큰", "api 키", "api키", "액세스 키", "키"),
        "pin": ("핀 번호", "핀번호", "pin 번호"),
    },
    "ja": {
        "password": ("パスワード", "パス", "ぱすわーど", "合言葉"),
        "secret": ("シークレット", "秘密鍵", "秘密キー", "認証情報", "ログイン情報"),
        "token": ("トークン", "apiキー", "api キー", "アクセスキー", "キー"),
        "pin": ("暗証番号", "pin番号", "pinコード"),
    },
    "zh": {
        "password": ("密码", "密碼", "口令"),
        "secret": ("密钥", "秘钥", "密鑰", "凭证", "憑證"),
        "token": ("令牌", "访问令牌", "api密钥", "api 密钥", "token"),
        "pin": ("pin码", "pin 码"),
    },
    "de": {
        "password": ("passwort", "kennwort", "pw"),
        "secret": ("geheimnis", "geheimer schlüssel", "zugangsdaten"),
        "token": ("zugriffstoken", "api-schlüssel", "schlüssel"),
        "pin": ("pin",),
    },
    "fr": {
        "password": ("mot de passe", "mdp"),
        "secret": ("clé secrète", "secret", "identifiants"),
        "token": ("jeton", "jeton d'accès", "clé api", "clé d'api", "clé"),
        "pin": ("code pin",),
    },
    "es": {
        "password": ("contraseña", "contrasena", "clave", "pass", "contra"),
        "secret": ("clave secreta", "secreto", "credenciales"),
        "token": ("token de acceso", "clave de api", "clave api"),
        "pin": ("pin",),
    },
    "pt": {
        "password": ("senha",),
        "secret": ("chave secreta", "segredo", "credenciais"),
        "token": ("token de acesso", "chave de api", "chave da api", "chave api"),
        "pin": ("pin",),
    },
    "tr": {
        "password": ("şifre", "şifresi", "sifre", "parola", "parolası"),
        "secret": ("gizli anahtar", "gizli"),
        "token": ("erişim tokenı", "api anahtarı", "anahtar"),
        "pin": ("pin",),
    },
    "ru": {
        "password": ("пароль", "пароля", "паролем", "пасс"),
        "secret": ("секрет", "секретный ключ", "креды", "кред", "учётные данные", "учетные данные"),
        "token": ("токен", "токен доступа", "ключ api", "ключ", "ключа", "ключу", "ключом",
                  "ключе", "ключи", "ключей"),
        "pin": ("пин-код", "пин"),
    },
    # languages no development set covered yet: the same four kinds, formal and informal
    "uk": {
        "password": ("пароль", "пароля", "паролем", "пасс"),
        "secret": ("секрет", "секретний ключ", "облікові дані", "креди"),
        "token": ("токен", "токен доступу", "ключ api", "ключ", "ключа", "ключу", "ключем",
                  "ключі", "ключів"),
        "pin": ("пін-код", "пін"),
    },
    "cs": {
        "password": ("heslo", "hesla", "heslem", "hesle"),
        "secret": ("tajný klíč", "tajemství", "přihlašovací údaje"),
        "token": ("přístupový token", "api klíč", "klíč"),
        "pin": ("pin kód",),
    },
    "sv": {
        "password": ("lösenord", "lösen", "losenord"),
        "secret": ("hemlig nyckel", "hemlighet", "inloggningsuppgifter"),
        "token": ("åtkomsttoken", "api-nyckel", "nyckel"),
        "pin": ("pinkod", "pin-kod"),
    },
    "da-no": {
        "password": ("adgangskode", "kodeord", "passord", "adgangskoden", "passordet"),
        "secret": ("hemmelig nøgle", "hemmelig nøkkel", "hemmelighet"),
        "token": ("api-nøgle", "api-nøkkel", "nøgle", "nøkkel"),
        "pin": ("pinkode",),
    },
    "fi": {
        "password": ("salasana", "salasanan", "salasanaksi", "salis"),
        "secret": ("salainen avain", "tunnukset"),
        "token": ("api-avain", "avain", "tokeni"),
        "pin": ("pin-koodi", "tunnusluku"),
    },
    "he": {
        "password": ("סיסמה", "סיסמא", "הסיסמה", "הסיסמא"),
        "secret": ("מפתח סודי", "סוד"),
        "token": ("טוקן", "מפתח api", "מפתח"),
        "pin": ("קוד pin", "קוד סודי"),
    },
    "fa": {
        "password": ("رمز عبور", "گذرواژه", "کلمه عبور", "پسورد", "رمز"),
        "secret": ("کلید مخفی", "کلید خصوصی"),
        "token": ("توکن", "کلید api", "کلید"),
        "pin": ("پین",),
    },
    "el": {
        "password": ("κωδικός", "κωδικό", "συνθηματικό", "κωδικός πρόσβασης"),
        "secret": ("μυστικό κλειδί", "μυστικό", "διαπιστευτήρια"),
        "token": ("διακριτικό", "κλειδί api", "κλειδί"),
        "pin": ("pin",),
    },
    "bn": {
        "password": ("পাসওয়ার্ড", "পাসওয়ার্ড"),
        "secret": ("গোপন চাবি", "সিক্রেট"),
        "token": ("টোকেন", "এপিআই কী"),
        "pin": ("পিন",),
    },
    "ro": {
        "password": ("parolă", "parola", "parolei"),
        "secret": ("cheie secretă", "secret", "credențiale"),
        "token": ("token de acces", "cheie api", "cheie", "cheia"),
        "pin": ("cod pin",),
    },
    "hu": {
        "password": ("jelszó", "jelszava", "jelszót", "jelszo"),
        "secret": ("titkos kulcs", "titok", "belépési adatok"),
        "token": ("hozzáférési token", "api kulcs", "kulcs"),
        "pin": ("pin kód",),
    },
    "sw": {
        "password": ("nenosiri", "neno siri"),
        "secret": ("ufunguo wa siri", "siri"),
        "token": ("tokeni", "ufunguo"),
        "pin": ("pin",),
    },
    "ur": {
        "password": ("پاس ورڈ", "پاسورڈ"),
        "secret": ("خفیہ کلید",),
        "token": ("ٹوکن", "کلید"),
        "pin": ("پن",),
    },
}  # fmt: skip

# Three more kinds, in every language: "pin" also names the codes of doors, alarms, safes
# and lockers and 2FA recovery codes; "phrase" (strong) is a passphrase, which may be words
# joined by dashes; "login" names an account and is read only for a ``user / password`` pair.
_MORE_LABELS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "pin": ("door code", "door pin", "access code", "alarm code", "alarm pin", "gate code",
                "safe code", "safe combination", "locker code", "locker combination",
                "keypad code", "entry code", "lockbox code", "2fa codes", "2fa backup codes",
                "2fa recovery codes"),
        "phrase": ("passphrase", "pass phrase", "key passphrase"),
        "wifi": ("wifi", "wi-fi", "wlan"),
    },
    "de": {
        "pin": ("türcode", "zugangscode", "alarmcode", "tresorcode", "alarmanlage",
                "schließfachcode", "torcode", "wiederherstellungscodes", "wiederherstellungscode",
                "backup-codes"),
        "phrase": ("passwortsatz", "kennwortsatz"),
        "login": ("zugang", "anmeldung"),
    },
    "es": {
        "pin": ("código de la puerta", "código de acceso", "código de la alarma", "código de alarma",
                "código de la caja fuerte", "códigos de recuperación", "código de recuperación",
                "códigos de respaldo"),
        "phrase": ("frase de paso", "frase de contraseña", "frase secreta"),
        "login": ("acceso",),
        "token": ("llave", "llave privada", "llave secreta"),
    },
    "fr": {
        "pin": ("code de la porte", "code d'accès", "code de l'alarme", "code alarme", "digicode",
                "code du coffre", "codes de secours", "codes de récupération", "code de secours"),
        "phrase": ("phrase de passe", "phrase secrète"),
        "login": ("accès", "connexion"),
    },
    "pt": {
        "pin": ("código da porta", "senha da porta", "código do alarme", "senha do alarme",
                "código de acesso", "códigos de backup", "códigos de recuperação"),
        "phrase": ("frase-senha", "frase de senha"),
        "login": ("acesso",),
        "token": ("chave", "chave privada"),
    },
    "it": {
        "pin": ("codice della porta", "codice dell'allarme", "codice di accesso", "codici di backup",
                "codici di recupero"),
        "phrase": ("frase segreta",),
        "login": ("accesso",),
    },
    "nl": {
        "pin": ("deurcode", "alarmcode", "toegangscode", "herstelcodes", "back-upcodes"),
        "phrase": ("wachtwoordzin",),
    },
    "pl": {
        "pin": ("kod do drzwi", "kod drzwi", "kod alarmu", "kodem", "kody zapasowe",
                "kody odzyskiwania"),
        "phrase": ("fraza hasła", "hasło frazowe"),
        "login": ("logowanie", "logowania"),
    },
    "ru": {
        "pin": ("код от двери", "код двери", "кодом", "код доступа", "код сигнализации",
                "резервные коды", "коды восстановления"),
        "phrase": ("пассфраза", "парольная фраза", "кодовая фраза"),
        "login": ("вход", "логин", "учётка", "учетка"),
    },
    "uk": {
        "pin": ("код від дверей", "код дверей", "кодом", "код доступу", "резервні коди",
                "коди відновлення"),
        "phrase": ("парольна фраза", "пасфраза"),
        "login": ("вхід", "логін"),
    },
    "sv": {
        "pin": ("koden", "portkoden", "portkod", "dörrkoden", "dörrkod", "larmkoden", "larmkod",
                "larmet", "återställningskoder", "reservkoder"),
        "phrase": ("lösenfras", "lösenfrasen"),
        "login": ("inloggning", "inloggningen"),
    },
    "tr": {
        "pin": ("kasanın şifresi", "kasa şifresi", "kapı şifresi", "kapı kodu", "alarm kodu",
                "kurtarma kodları", "yedek kodlar"),
        "phrase": ("parola öbeği", "parola ifadesi"),
        "login": ("giriş", "girişi"),
        "token": ("anahtarı", "anahtarını"),
    },
    "vi": {
        "pin": ("mã cửa", "mã báo động", "mã két", "mã tủ", "mã khôi phục", "mã dự phòng"),
        "phrase": ("cụm mật khẩu",),
        "login": ("tài khoản", "đăng nhập"),
    },
    "id": {
        "pin": ("kode pintu", "kode akses", "kode alarm", "kode brankas", "kode loker",
                "kode pemulihan", "kode cadangan"),
        "phrase": ("frasa sandi",),
        "login": ("akun",),
    },
    "ar": {
        "pin": ("رقم الإنذار", "رمز الإنذار", "رمز الباب", "رقم الباب", "رمز الدخول",
                "رموز الاسترداد", "رموز النسخ الاحتياطي"),
        "phrase": ("عبارة المرور", "عبارة السر"),
        "login": ("دخول", "تسجيل الدخول"),
    },
    "hi": {
        "pin": ("दरवाज़े का code", "दरवाजे का code", "दरवाज़े का कोड", "दरवाजे का कोड", "locker का code",
                "लॉकर का कोड", "रिकवरी कोड", "बैकअप कोड"),
        "phrase": ("पासफ़्रेज़", "पासफ्रेज"),
        "login": ("लॉगिन",),
    },
    "ja": {
        "pin": ("ダイヤル番号", "解除コード", "ドアコード", "入室コード", "リカバリーコード",
                "バックアップコード", "復旧コード"),
        "phrase": ("パスフレーズ",),
        "login": ("ログイン",),
    },
    "ko": {
        "pin": ("도어락 번호", "도어락 비밀번호", "도어락", "출입 번호", "금고 번호", "복구 코드",
                "백업 코드"),
        "phrase": ("패스프레이즈", "암호 문구"),
        "login": ("계정", "로그인"),
    },
    "zh": {
        "pin": ("门禁密码", "門禁密碼", "门禁", "門禁", "保险箱密码", "保險箱密碼", "保险箱", "保險箱",
                "恢复码", "备用码", "備用碼", "復原碼", "恢復碼"),
        "phrase": ("密码短语", "口令短语", "密碼短語"),
        "login": ("帳密", "账密", "帳號", "账号", "登录", "登入", "登錄"),
        "secret": ("授权码", "授權碼", "私钥", "私鑰"),
        "token": ("權杖", "金鑰", "密鑰", "存取金鑰", "api 金鑰", "sk"),
    },
    "th": {"pin": ("รหัสสำรอง", "รหัสกู้คืน", "ตู้เซฟ")},
    # accounts: a shared or service account's ``user / password`` pair
    "accounts": {
        "login": ("service account", "shared account", "qa account", "qa-account", "test account",
                  "admin account", "bot account", "ci account", "konto", "kontot", "compte",
                  "cuenta", "conta compartilhada", "conta de serviço", "conta de qa",
                  "hesap", "hesabı", "hesabi", "аккаунт", "акаунт", "учётная запись",
                  "учетная запись", "обліковий запис", "アカウント", "अकाउंट", "खाता", "حساب",
                  "账户", "帳戶", "帐号", "帳号", "akun", "tài khoản"),
    },
    # safes, padlocks and lockers: the code near them is theirs
    "safes": {
        "pin": ("safe code", "safe combination", "padlock code", "padlock", "combination lock",
                "lock combination", "tresor", "tresorcode", "vorhängeschloss", "caja fuerte",
                "candado", "taquilla", "casillero", "coffre-fort", "cadenas", "cassaforte",
                "lucchetto", "armadietto", "cadeado", "sejf", "sejfu", "kłódka", "kłódki", "сейф",
                "сейфа", "сейфу", "kluis", "hangslot", "kassaskåp", "kassaskåpet", "hänglås",
                "kasa kodu", "kasanın", "dolap şifresi", "asma kilit", "két sắt", "tủ khóa",
                "gembok", "loker", "الخزنة", "الخزينة", "तिजोरी", "लॉकर", "金庫", "ロッカー", "南京錠",
                "금고", "사물함", "자물쇠", "保险柜", "保險櫃", "储物柜", "儲物櫃", "密码锁", "密碼鎖"),
    },
    "da-no": {"phrase": ("adgangsfrase", "passordfrase")},
}  # fmt: skip
for _lang, _kinds in _MORE_LABELS.items():
    for _kind, _labels in _kinds.items():
        LABELS.setdefault(_lang, {})[_kind] = LABELS.get(_lang, {}).get(_kind, ()) + _labels

STRONG = frozenset({"password", "secret", "pin", "phrase", "wifi"})
DETECTOR_KEYS = {
    "password": "password", "pin": "password", "secret": "secret", "token": "api_key",
    "phrase": "password", "wifi": "password", "direct": DIRECT_KEY,
}  # fmt: skip
"""The key detect-secrets' KeywordDetector knows for each kind (see :mod:`._generic`)."""
BRIDGE_WORDS = 5
"""Words a label may reach across to its separator (``password for the staging admin:``)."""


def label_words() -> tuple[str, ...]:
    """A literal of each label the anchor pass must find (lower case; its longest word)."""
    words = set()
    more = {
        label for kinds in _MORE_LABELS.values() for labels in kinds.values() for label in labels
    }
    for kinds in LABELS.values():
        for labels in kinds.values():
            for label in labels:
                longest = max(label.split(" "), key=len).lower()
                if label in more and " " in label and longest.isascii():
                    longest = label.lower()  # door code, not door (delegate, unsafe, decodes…)
                elif label in more and len(longest) <= 3 and longest.isascii():
                    continue  # SK: anchored on its separator below
                words.add(longest)
    words |= {" sk:", " sk：", " sk =", " p :"}  # (sk: alone is inside task:, mask =)
    words |= {"mysql", "mariadb", "sshpass", "curl", "redis-cli", " p:", " p=", "login", "sqlcmd",
              "htpasswd", "ldap", "smbclient", "pass:", "--password"}  # fmt: skip
    words |= set(PROVIDERS)
    return tuple(sorted(words))


def _is_unspaced(label: str) -> bool:
    """Scripts written without spaces between words: Han, kana, Hangul, Thai."""
    return any(
        "\u3040" <= c <= "\u30ff"
        or "\u3400" <= c <= "\u9fff"
        or "\uac00" <= c <= "\ud7af"
        or "\u0e00" <= c <= "\u0e7f"
        for c in label
    )


_COPULAS = (
    r"is|was|are|were|be|=|equals|set\s+to|became|becomes|now|"  # en
    r"là|la|ist|lautet|war|est|était|es|era|é|è|sono|e|adalah|ialah|yaitu|yakni|jest|to|"
    r"brzmi|wynosi|is|luidt|zijn|هي|هو|ke|है|हैं|था|คือ|เป็น|是|为|為|は|が|:|—|–|-|->|→"
)
_PARTICLES = r"(?:는|은|이|가|를|을|의|는요|是|为|為|は|が|を|の|で|も|คือ|เป็น|：|:)"
_SEP = (
    r"(?P<sep>[ \t]*(?:\(|\[)?[^\S\n]*(?::=|=>|[:=：＝]|->|→|[-–—](?=[ \t]))[ \t]*"
    r"|[ \t]+(?:" + _COPULAS + r")(?![\w])[ \t]*[:：]?[ \t]*"
    r"|" + _PARTICLES + r"[ \t]*(?:" + _COPULAS + r")?[ \t]*"
    r")"
)
_VALUE = (
    r"(?:(?P<q>[\"'`“「『‘])(?P<qv>[^\"'`”」』’\n]{4,200})[\"'`”」』’]"
    r"|(?P<uv>(?:(?![\"'`,;()\[\]{}<>])[!-~]){4,200}))"
)


def _trie(words: list[str]) -> str:
    """A regex matching any of ``words`` that ``re`` walks letter by letter (a trie), longest
    first; a space in a label matches one optional blank, dash or underscore."""
    root: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict) -> str:  # type: ignore[type-arg]
        branches = []
        for char in sorted((c for c in node if c), key=lambda c: -_depth(node[c])):
            head = r"[ \t\-_]?" if char == " " else re.escape(char)
            branches.append(head + emit(node[char]))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return "(?:" + body + ")?" if "" in node else body

    return emit(root)


def _depth(node: dict) -> int:  # type: ignore[type-arg]
    return 1 + max((_depth(child) for child in node.values()), default=0)


def _label_alternation() -> tuple[str, dict[str, str]]:
    """The labels as one pattern over the caseless fold of a line, and each label's kind."""
    kinds: dict[str, str] = {}
    for table in LABELS.values():
        for kind, labels in table.items():
            for label in labels:
                kinds.setdefault(re.sub(r"[ \t\-_]+", " ", caseless_fold(label)), kind)
    spaced = [label for label in kinds if not _is_unspaced(label)]
    unspaced = [label for label in kinds if _is_unspaced(label)]
    return (
        r"(?<![^\W_"
        + _CJK
        + r"])(?:"
        + _trie(spaced)
        + r")(?![^\W\d_"
        + _CJK
        + r"])|(?:"
        + _trie(unspaced)
        + ")",
        kinds,
    )


_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
"""Kana, Han and Hangul: a Latin label glued to them is still a word (``PIN은``, ``のadmin``)."""


@functools.cache
def _patterns() -> tuple[re.Pattern[str], dict[str, str], re.Pattern[str]]:
    alternation, kinds = _label_alternation()
    label = re.compile(r"(?P<label>" + alternation + r")")
    after = re.compile(
        r"(?i)(?P<bridge>(?:[ \t]*\([^()\n]{1,40}\)|[ \t]+(?!(?:" + _COPULAS + r")(?!\w))"
        r"[^\s:=：＝\"'`]{1,30}){0," + str(BRIDGE_WORDS) + r"}?)" + _SEP + _VALUE
    )
    return label, kinds, after


_BARE = _r(
    r"[ \t]+(?:(?P<q>[\"'`“「『])(?P<qv>[^\"'`”」』\n]{6,200})[\"'`”」』]"
    r"|(?P<uv>(?:(?![\"'`,;()\[\]{}<>])[!-~]){6,200}))"
)
_BEFORE = _r(
    r"[ \t]*(?:という|っていう|って|이라는|라는|은|는)[ \t]*"
    r"(?:パスワード|暗証番号|トークン|シークレット|비밀번호|비번|패스워드|토큰)"
)
"""The particle and label after a value (``V というパスワード``); the value is the ASCII run
ending where this starts (searched backwards, so a long line costs one pass)."""
_RUN_END = _r(r"[!-~]{6,200}$")
_PAIR = _r(
    r"(?i)(?<![\w])(?:u|user|usr|username|login|id)[ \t]*[:=][ \t]*[^\s:=]{1,64}[ \t,;|/]+"
    r"(?:p|pw|pwd|pass|passwd|password)[ \t]*[:=][ \t]*(?P<uv>[!-~]{4,200})"
)
_CLI_WORDS = ("mysql", "mariadb", "sshpass", "curl", "redis-cli", "sqlcmd", "bcp", "osql",
              "htpasswd", "ldap", "smbclient", "pass:", "--password")  # fmt: skip
_CLI = _r(
    r"(?i)(?:(?<![\w-])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?[ \t]-p(?P<a>[^\s'\"`-][^\s'\"`]*|'[^'\n]+'|\"[^\"\n]+\")"
    r"|(?<![\w-])sshpass[ \t]+-p[ \t]*(?P<b>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"]+)"
    r"|(?<![\w-])curl\b[^\n]*?[ \t](?:-u|--user)[ \t]*['\"]?[^\s:'\"]+:(?P<c>[^\s'\"]+)"
    r"|(?<![\w-])redis-cli\b[^\n]*?[ \t]-a[ \t]+(?P<d>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"`]+)"
    r"|(?<![\w-])(?:sqlcmd|bcp|osql)\b[^\n]*?[ \t]-P[ \t]*(?P<e>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"`]+)"
    r"|(?<![\w-])htpasswd[ \t]+-\w*b\w*[ \t]+(?:-\w+[ \t]+)*\S+[ \t]+\S+[ \t]+(?P<f>[^\s'\"`]+)"
    r"|(?<![\w-])ldap\w+\b[^\n]*?[ \t]-w[ \t]*(?P<g>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"`]+)"
    r"|(?<![\w-])smbclient\b[^\n]*?[ \t]-U[ \t]*['\"]?[^\s%'\"]+%(?P<h>[^\s'\"`]+)"
    r"|[ \t]-pass(?:in|out)?[ \t]+['\"]?pass:(?P<i>[^\s'\"`]+)"
    r"|[ \t]--password(?:=|[ \t]+)(?P<j>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"`-][^\s'\"`]*))"
)
_TOKEN_RUN = _r(r"(?<![\w\-./+=])(?P<uv>[A-Za-z0-9_\-]{32,128})(?![\w\-./+=])")
PROVIDERS: tuple[str, ...] = (
    "n8n", "airtable", "notion", "openrouter", "replicate", "mailchimp", "hubspot", "brevo",
    "pipedrive", "clickup", "vercel", "netlify", "cloudflare", "supabase", "firebase", "heroku",
    "railway", "gohighlevel", "ghl", "zapier", "twilio", "sendgrid", "mailgun", "postmark",
    "resend", "elevenlabs", "deepgram", "pinecone", "cohere", "mistral", "groq", "perplexity",
    "gemini", "apify", "serpapi", "vapi", "bearer",
)  # fmt: skip
"""Providers whose tokens have no fixed prefix: a long random run beside the name is one."""
_TOKEN_WORDS = _r(
    r"(?i)(?:api|token|secret|bearer|auth|key|credential|access|pat)(?![a-z])|"
    + "|".join(PROVIDERS)
)
_DIGEST_WORDS = _r(
    r"(?i)(?<![a-z])(?:sha\d*|md5|hash|digest|checksum|etag|e-tag|integrity|commit|fingerprint"
    r"|cache|id|ids|uid|uuid|guid|kms|version|versions|nonce|salt|hex|address|wallet|contract|tx|txid|block|revision|rev"
    r"|public|pubkey|publishable)"
    r"(?![a-z])"
    # the same words in the other languages (stems: they may be inflected or compounded)
    r"|(?i:caché|cach[eé]|кэш|кеш|कैश|캐시|キャッシュ|缓存|快取|แคช|التخزين المؤقت|bộ nhớ đệm"
    r"|identifiant|identificador|identificativo|identificatore|identyfikator|identificatie"
    r"|versión|versão|версия|버전|バージョン|版本|kennung|kimli[gğ]|идентификатор|ідентифікатор|معرّف|आईडी|아이디|식별자|标识|識別|识别码|ไอดี|معرف|định danh"
    r"|pengenal|huella|impronta|empreinte|fingerabdruck|vingerafdruk|odcisk|sidik jari"
    r"|parmak izi|отпечат|відбит|फ़िंगरप्रिंट|फिंगरप्रिंट|指纹|指紋|フィンガープリント|지문|핑거프린트"
    r"|ลายนิ้วมือ|بصمة|vân tay|prüfsumme|somme de contrôle|suma de control|soma de verificação"
    r"|checksum|sağlama|контрольн|चेकसम|チェックサム|체크섬|校验|校驗|ハッシュ|해시|哈希|хеш|हैश"
    r"|แฮช|تجزئة|ダイジェスト|다이제스트|摘要|дайджест|コミット|커밋|提交|коммит|कमिट|คอมมิต"
    r"|リクエスト|요청|请求|запрос|अनुरोध|คำขอ|طلب|request|trace|span|build|petici[oó]n|solicitud"
    r"|requête|requete|richiesta|requisição|requisicao|anfrage|verzoek|żądani|zadani|istek"
    r"|permintaan|yêu cầu|idempot|идемпотент|ідемпотент|幂等|冪等|べき等|멱등|lũy đẳng|correlat|corrélat"
    r"|korrelat|korelac|корреляц|кореляц|相关|相關|相関|상관|dedup|كاش|önbellek|öffentlich|pública|publica|pubblica|publique|publiek|publiczn|公開|공개"
    r"|公钥|公鑰|публичн|открыт|सार्वजनिक|สาธารณะ|العام|genel anahtar|công khai|kunci publik)"
)
_EXAMPLE = _r(
    r"(?i)^[\s>*#/\-+|`]*(?:example|examples|e\.g\.|eg|for example|sample|demo|예|예시|例|例如|示例"
    r"|ví dụ|beispiel|exemple|ejemplo|esempio|voorbeeld|przykład|contoh|مثال|उदाहरण|ตัวอย่าง"
    r"|örnek|пример|exemplo)\b[ \t]*[:：]?"
)
_NOT_SECRET_LABEL_TAIL = _r(
    r"(?i)^[ \t_\-.]?(?:id|ids|name|names|path|file|files|type|length|len|size|count|index|ref"
    r"|url|uri|field|column|attr|prefix|policy|policies|rotation|expiry|expires|manager|store"
    r"|vault|reset|hint|format|header|node|env|variable|var|arn)(?![\w])"
)
_HEX = _r(r"[0-9a-fA-F]+")
_HASH_NAME_END = _r(r"(?i)(?<![a-z0-9])(?:sha-?\d*|md5|blake2[bs]?|sha3-\d+)\)?$")
_PATH_PART = _r(r"[a-z0-9_.\-]+")
_NAME_PART = _r(r"[A-Z]?[a-z]{2,}\d{0,4}")
_EXAMPLE_BEFORE = _r(
    r"(?i)(?:e\.g\.|eg\.|i\.e\.|for example|for instance|such as|like|z\.\s?b\.|zum beispiel|p\.\s?ej\."
    r"|por ejemplo|par exemple|p\.\s?ex\.|ad es\.|ad esempio|per esempio|bijv\.|bijvoorbeeld|np\."
    r"|na przykład|örn\.|örneğin|напр\.|например|к примеру|contoh|misalnya|ví dụ|chẳng hạn|مثلا|مثلاً"
    r"|مثل|जैसे|उदाहरण|เช่น|ตัวอย่าง|例えば|例：|例:|（例|\(例|例如|比如|예:|예：|예를 들어|ex\.|exemplo|por exemplo)"
    r"[ \t:：]*[\"'`“「（(]?$"
)
_IDENTIFIER_HUMPS = _r(r"(?:[A-Z][a-z]+|[A-Z]+(?![a-z])|\d+)+")
_IDENTIFIER_HUMPS_EACH = _r(r"[A-Z][a-z]+|[A-Z]+(?![a-z])|\d+")
_VERSION = _r(r"[vV]?\d+(?:\.\d+)+(?:[-+._][0-9A-Za-z]+)*")
_TABLE_ROW = _r(r"(?m)^[ \t]*\|[^\n]*\|[ \t]*$")
_ACCOUNT = _r(r"[A-Za-z_][\w.\-]{1,40}(?:@[\w.\-]+)?")
NEAR_CHARS = 60
"""How far (in characters) a credential-shaped word may be from its label (:func:`_near`)."""
DIRECT_KIND = "direct"
_RUN_CHAR = (
    "["
    + "".join(re.escape(chr(c)) for c in range(0x21, 0x7F) if chr(c) not in "\"'`,;()[]{}<>|")
    + "]"
)
_VALUE_RUN = _r(rf"(?<!{_RUN_CHAR})(?:{_RUN_CHAR}{{11,}}|(?={_RUN_CHAR}*[0-9A-Z]){_RUN_CHAR}+)")
"""The runs of :data:`_RUN_CHAR` :func:`_may_judge` can take (11 characters, the shortest
passphrase, or a digit or a capital in it: stripping ``*.,:;`` removes neither); a line's
short lower-case words are never visited."""
_GROUPED = _r(r"(?<![\w\-])[a-z]{4}(?: [a-z]{4}){3}(?![\w\-])")
_CAMEL_LABEL = _r(r"(?<=[a-z])(Secret|Password|Passwd|Token|Key)(?![a-z])")
_CAMEL_KINDS = {"secret": "secret", "password": "password", "passwd": "password", "token": "token",
                "key": "token"}  # fmt: skip
_YEAR = _r(r"(?:19|20)\d\d")
_DATE = _r(r"(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])")
_NAMESPACED = _r(r"(?:[A-Za-z][\w\-]*:)+(?:[0-9a-fA-F\-]{8,})?")
_FINGERPRINT = _r(r"(?i)(?:sha-?\d+|md5|blake2[bs]?|sha3-\d+)(?::|$)")
_UUID = _r(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_JOINED_WORDS = _r(r"[A-Za-z]+(?:[-_.:/][A-Za-z]+)+|[A-Z][a-z]*(?:-[A-Z][a-z]*)+-\d{1,4}")
_KWARG = _r(r"[a-z_][a-z_\-]{2,}=(?:[a-z_]+|\d+|True|False|None)")
_PREFIXED_UUID = _r(r"[a-z]{2,6}[-_]" + _UUID.pattern)
_CACHE_KEY = _r(
    r"(?:[\w.]{1,24}-)*[A-Za-z]{3,}(?:-[\w.]{1,24})*-"
    r"(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128})"
)
"""A cache key by its shape (``v4-deps-<sha256>``, ``Linux-node-<hash>``: actions/cache):
dash-joined parts, one of them a word, then a digest. Two parts at least before the digest
(``pul-<hex40>``, one part, is a token)."""
_PUBLIC_ID = _r(
    r"(?:cus|price|prod|sub|si|pi|ch|in|ii|acct|evt|txn|po|pm|seti|src|card|ba|py|re|tr|plan"
    r"|inv|cs|prom|promo|coupon|ord|order|quote|file|link|plink|bpc|ich|ca|cn|dp|du|ic|il"
    r"|iv|mbur|payatt|pyr|trr|ipi|ssi|tml|tmr|txi|or|cbtxn|fee|wh|we)_[A-Za-z0-9]{8,40}"
    r"|pk_(?:live|test)_[A-Za-z0-9]{16,128}|rzp_(?:live|test)_[A-Za-z0-9]{10,20}"
    r"|(?:live|test)_g?ck_[A-Za-z0-9]{16,64}|LTAI[A-Za-z0-9]{12,20}"
)
"""Ids and keys that are public by design: Stripe objects (``cus_``, ``price_``) and publishable
keys (``pk_live_``), a Razorpay key id (``rzp_live_``), a Toss client key (``test_ck_``), an
Alibaba Cloud AccessKey id (``LTAI``)."""
_NAME_JOINED = _r(
    r"(?:[A-Z]?[a-z]{2,}[-_]|[A-Z]{2,}[-_])+(?:\d{1,2}[A-Za-z][A-Za-z0-9]{0,3}|(?:19|20)\d\d)"
)
"""A name of words joined by dashes or underscores, ending in a figure with its unit or a year
(``Acme-Guest-5G``, ``Office_5GHz2``: a network's name; ``Swish-cert-2025``: a vault item's),
not a password (``Gorfiq_341``)."""
_SRI = _r(r"(?i)(?:sha1|sha256|sha384|sha512)-[A-Za-z0-9+/]{20,}={0,2}")
"""A subresource-integrity hash (npm ``integrity``)."""
_COLON_HEX = _r(r"(?:[0-9a-fA-F]{2}:){5,}[0-9a-fA-F]{2}")
"""A key's MD5 fingerprint or a hardware address, written in colon-separated pairs."""
_ADDRESS = _r(r"(?:bc|tb|ltc)1[02-9ac-hj-np-z]{25,87}|0x[0-9a-fA-F]{40}|T[1-9A-HJ-NP-Za-km-z]{33}")
"""A public wallet address (bech32, an Ethereum or a Tron address)."""
_FAKE = _r(
    r"(?i)(?<![a-z])(?:fake|dummy|mock|bogus|value|exemplo|ejemplo|exemple|beispiel|esempio"
    r"|voorbeeld|przyk[lł]ad|contoh|örnek|ornek)(?![a-z])"
)
"""A value that says it is made up (``test1234-fake``, ``fake_pwd_123``) or a placeholder for
one (``key1=value1//key2=value2``: the docs of an options string)."""
_TEMPLATE = _r(
    r"%[-#0 +]*\d*\.\d*[sdfirx]|%\([\w.]+\)|%[sdr](?![A-Za-z0-9])|^%[sd]"
    r"|(?<![A-Za-z0-9])(?:#[A-Za-z_]{3,}\w*#|@[A-Za-z_]{3,}\w*@)(?![A-Za-z0-9])|^\$\w|\$\{|\{|\}|<|>"
    r"|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|&(?:lt|gt|amp|quot|#\d+);"
)
_KEY_FILE = _r(
    r"(?i)\.(?:pem|key|p12|pfx|ppk|jks|keystore|crt|cer|pub|json|kdbx|env|txt|ya?ml|conf|cfg"
    r"|ini|sh|py|js|ts|md)$"
)
_DOC_VALUES = frozenset(
    {"hunter2", "password1", "password123", "passw0rd", "test123", "secret123", "changeit",
     "letmein", "qwerty123", "foobar", "abc123", "pass123", "pass1234", "mypassword",
     "123456", "12345678", "admin123"}
)  # fmt: skip
_DOC_STEMS = _r(
    r"(?i)(?:password|passwd|secret|test|demo|sample|foo|bar|baz|dummy|fake)\d{0,4}[!.]?"
)


def example_line(line: str) -> bool:
    """A line that gives an example (``example: password=hunter2``, ``예: …``)."""
    return _EXAMPLE.match(line) is not None


def credential_value(value: str, kind: str, *, example: bool = False) -> bool:
    """Whether ``value`` can be a credential under a label of ``kind`` (the value model).

    The same for every script: a template, a path or key-file name, a URL, an id
    (a UUID, a public ``0x`` address), a hash without a secret label, a placeholder
    or a word is not a credential; a weak label (``token``) or an example line asks
    for a random-looking value.
    """
    if not 4 <= len(value) <= 200 or not value.isascii() or not value.isprintable():
        return False
    if any(c.isspace() or c in "()[]{}<>\"'`" for c in value) or _TEMPLATE.search(value):
        return False
    if value[0] == "-" and value[1:].isalpha():
        return False  # `password123`-Defaults: a compound's tail, glued to the label by a dash
    if kind == "pin" and _digit_code(value):
        digits = value.rstrip("*#").replace("-", "")
        return 4 <= len(digits) <= 12 and len(set(digits)) > 2 and not _SEQUENTIAL.match(digits)
    if kind == "phrase":
        if _PASSPHRASE.fullmatch(value):
            return not looks_like_placeholder(value) and not _FAKE.search(value)
        kind = "password"
    if kind == "wifi":  # a network's password, not its name (Bureau-5G, Acme_Guest)
        marks = any(not c.isalnum() and c not in "-_." for c in value)
        if sum(c.isdigit() for c in value) < 2 and not marks and not generic_value_random(value):
            return False
        kind = "password"
    if _JOINED_WORDS.fullmatch(value) or _KWARG.fullmatch(value) or _name_joined(value):
        return False  # Accept-Encoding, SCHEMATHESIS-INVALID-VALUE, verbosity=0
    lowered = value.lower()
    if lowered in _DOC_VALUES or _DOC_STEMS.fullmatch(value):
        return False
    if "password" in lowered or "secret" in lowered or "passwd" in lowered:
        return False  # password1, a%20secret, rest-of-my-password: the label, not a value
    if value.startswith(("/", "./", "../", "~/", "\\\\")) or re.match(r"[A-Za-z]:\\", value):
        if not _base64_blob(value):
            return False  # a path, not base64 that starts with a slash
    if _KEY_FILE.search(value) or "://" in value:
        return False
    if _FINGERPRINT.match(value) or _NAMESPACED.fullmatch(value):
        return False  # SHA256:… (a key's fingerprint), pricing:v3:<md5> (a cache key)
    if _path_words(value) or value.startswith(("AAAAC3NzaC1", "AAAAB3NzaC1", "AAAAE2VjZHNh")):
        return False  # prod/db/MainUser2 (a path of words); an SSH public key's blob
    if _UUID.search(value) and not (kind == "token" and _PREFIXED_UUID.fullmatch(value)):
        return False  # an id; ``pit-<uuid>`` (a prefixed token) is a key
    if _ADDRESS.fullmatch(value) or _PUBLIC_ID.fullmatch(value) or _COLON_HEX.fullmatch(value):
        return False  # a public address, id or publishable key; a key's fingerprint
    if _SRI.fullmatch(value) or _FAKE.search(value):
        return False  # an integrity hash; a value that says it is fake
    if value.count("-") >= 2 and _CACHE_KEY.fullmatch(value):
        return False  # v4-deps-<sha256>: a cache key (parts, then a digest)
    if _NUMBERED_PHRASE.fullmatch(value) and not _numbered_phrase(value):
        return False  # fix-reset-email-41: a branch's or a page's slug
    human = _HUMAN_PASSWORD.fullmatch(value)
    if human is not None and human.group("word").lower() in _SLUG_WORDS | _TECH_WORDS:
        return False  # bcrypt-12, varchar-255, days-90: a setting, not a password
    if "@" in value and re.fullmatch(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+", value):
        return False  # an e-mail address
    if re.search(r"&[A-Za-z_]\w{2,}=", value) or _camel_words(value):
        return False  # a query string; words in CamelCase (IAmSensitive)
    if value.isdigit() and len(value) < 12:
        return False
    if _VERSION.fullmatch(value):
        return False  # v2.14.3-rc.78208
    if _PREFIXED_UUID.fullmatch(value):
        return kind == "token"
    if not generic_value_plausible(value) and not (
        kind in STRONG and (_short_password(value) or prose_password(value))
    ):
        if not _base64_blob(value):
            return False
    if kind not in STRONG or example:
        if _HEX.fullmatch(value) and kind not in STRONG:
            return False
        return generic_value_random(value)
    return not looks_like_placeholder(value)


def _path_words(value: str) -> bool:
    """``prod/db/MainUser2``, ``kv/prod/PaymentsApiKey``: two or more slashes between words,
    not base64's random runs."""
    parts = value.split("/")
    if len(parts) < 3 or not all(parts):
        return False
    return all(
        _PATH_PART.fullmatch(p) or _camel_words(p) or p.isalpha() or _NAME_PART.fullmatch(p)
        for p in parts
    )


def _camel_words(value: str) -> bool:
    """Words in CamelCase (``IAmSensitiveBytes``, ``PKCS12PrivateKeyTypes``: a type's name),
    not random mixed case."""
    if value.isalnum() and not value.isalpha() and _IDENTIFIER_HUMPS.fullmatch(value):
        humps: list[str] = _IDENTIFIER_HUMPS_EACH.findall(value)
        if any(len(h) == 2 and h[1].islower() for h in humps[1:]):
            return False  # ...VpVMYs...: random case, not words
        words = sum(len(h) >= 3 and h[1:].islower() for h in humps)
        short = sum(len(h) <= 2 and not h.isdigit() for h in humps)  # Qz7DNxril3RavG: Qz, D, G
        return words >= 2 and sum(h.isdigit() for h in humps) <= 2 and short <= 2
    if not value.isalpha() or value.islower() or value.isupper():
        return False
    humps = re.findall(r"[A-Z][a-z]*|[a-z]+", value)
    long = sum(len(h) >= 3 for h in humps)
    return long >= 2 and sum(len(h) < 3 for h in humps) <= 2


def echoes_label(key: str, value: str) -> bool:
    """The value repeats the label's words (``PKCS8_PRIV_KEY_INFO = pkcs8_priv_key_info_st``)."""
    words = {w for w in re.split(r"[^a-z]+", key.lower()) if len(w) >= 3}
    mine = [w for w in re.split(r"[^a-z]+", value.lower()) if len(w) >= 3]
    return len(mine) >= 2 and sum(w in words for w in mine) >= 2


def _short_password(value: str) -> bool:
    """6-15 characters, digits or symbols among letters: a password, not a word."""
    if not 6 <= len(value) <= 15 or not any(c.isalpha() for c in value):
        return False
    classes = sum(
        (any(c.islower() for c in value), any(c.isupper() for c in value),
         any(c.isdigit() for c in value), any(not c.isalnum() for c in value))
    )  # fmt: skip
    return classes >= 3 and not value.startswith(("$", "%", "{", "<", "@", "("))


_TRAIL = ".,;:!?)]}»」』”’"


def _clean(value: str, quoted: bool) -> str:
    if quoted:
        return value.strip()
    value = value.rstrip(_TRAIL)
    if value.endswith("**"):  # **Password WiFi:** (a bold label's closing marks)
        value = value.rstrip("*").rstrip(_TRAIL)
    return value[:-1] if value.endswith(("'", '"', "`")) else value


def _split_pair(value: str, rest: str) -> str:
    """``user:V`` (creds) or ``user / V`` (the next words): the secret half."""
    if ":" in value and not value.startswith(":") and not _FINGERPRINT.match(value):
        head, _, tail = value.partition(":")
        if re.fullmatch(r"[\w.+\-@]{1,64}", head) and tail:
            return tail
    pair = re.match(r"[ \t]*/[ \t]*(?:[\"'`](?P<qv>[^\"'`\n]+)[\"'`]|(?P<uv>[!-~]{4,200}))", rest)
    if pair is not None and re.fullmatch(r"[\w.+\-@]{1,64}", value):
        return _clean(pair.group("qv") or pair.group("uv"), pair.group("qv") is not None)
    return value


CODE_SUFFIXES = frozenset(
    {".py", ".pyi", ".pyx", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java",
     ".kt", ".scala", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".m",
     ".lua", ".pl", ".r", ".jl", ".dart", ".ex", ".exs", ".clj", ".hs", ".ml", ".vue", ".svelte"}
)  # fmt: skip
"""Source code: its assignments are the pattern's business; the label model reads prose
(memory, notes, docs, configs, shell), where credentials are written as people talk."""


def reads(path: str) -> bool:
    """Whether the label model reads a file at ``path`` (everything but source code)."""
    dot = path.rfind(".")
    return dot < 0 or path.rfind("/") > dot or path[dot:].lower() not in CODE_SUFFIXES


MAX_LABELS = 16
"""Labels read per line (or window): prose names a secret a few times a line; a hostile line
that repeats a label thousands of times costs no more than this many."""
LONG_LINE = 2000
"""A line longer than this (minified JSON, a data blob) is read in overlapping windows, so
the label model's cost per character stays bounded."""


_PUNCT = r"[!-/:-@\[-`{-~]"


@functools.cache
def _may_hold() -> re.Pattern[str]:
    """What every value the label model takes holds, somewhere on its line: a digit, or a
    run of :data:`PASSPHRASE_MIN` printable ASCII characters (a passphrase; a token, a UUID
    or hex are longer), or a capital and a symbol in one run (a short password with neither
    digits nor length: :func:`_short_password`'s three classes). A value is a piece of one
    such run (:func:`credential_value` refuses blanks and other scripts)."""
    p = _PUNCT
    return re.compile(rf"[0-9]|[!-~]{{{PASSPHRASE_MIN}}}|[A-Z][!-~]*{p}|{p}[!-~]*[A-Z]")


def may_hold_value(line: str) -> bool:
    """False when no reading of the label model can take a value from ``line``: a cheap
    test (one regex) before the dear ones. The prose line ``Pin budget always until the
    rollout.`` holds a label and only words; ``four words of four`` letters
    (:data:`_GROUPED`, an app password) is the one value without any of those marks."""
    return _may_hold().search(line) is not None or _GROUPED.search(line) is not None


def candidates(line: str) -> Iterator[tuple[str, str]]:
    """(kind, value) for each credential the label model reads on ``line``."""
    if not may_hold_value(line):
        return  # (a window of a long line holds no more than the line)
    if len(line) <= LONG_LINE:
        yield from _candidates(line)
        return
    for start in range(0, len(line), LONG_LINE // 2):
        found = next(_candidates(line[start : start + LONG_LINE]), None)
        if found is not None:
            yield found
            return


def _candidates(line: str) -> Iterator[tuple[str, str]]:
    example = example_line(line)
    label_re, kinds, after = _patterns()
    lowered = line.lower()
    cli = any(word in lowered for word in _CLI_WORDS)
    for match in _CLI.finditer(line) if cli else ():
        raw = next(g for g in match.groups() if g is not None)
        quoted = raw[:1] in "'\"" and raw[-1:] == raw[:1]
        value = raw[1:-1] if quoted else raw
        if credential_value(value, "password", example=example) or _short_password(value):
            yield "password", value
            return
    paired = any(
        part in lowered for part in ("u:", "u=", "u :", "user:", "user=", "name:", "login:")
    )
    for match in _PAIR.finditer(line) if paired else ():
        value = _clean(match.group("uv"), False)
        if credential_value(value, "password", example=example):
            yield "password", value
            return
    for match in _BEFORE.finditer(line) if not line.isascii() else ():
        run = _RUN_END.search(line, max(0, match.start() - 200), match.start())
        if run is None:
            continue
        value = _clean(run.group(), False)
        if credential_value(value, "password", example=example):
            yield "password", value
            return
    folded = caseless_fold(line)  # (the fold keeps every offset)
    matches = list(islice(label_re.finditer(folded), MAX_LABELS))
    codes = _recovery_codes(line, matches, kinds)
    if codes is not None:
        yield DIRECT_KIND, codes
        return
    labels: list[tuple[int, int, str]] = []  # the labels that name a secret, read once
    for match in matches:
        start, end = match.span()
        if _NOT_SECRET_LABEL_TAIL.match(line, end) or _digest_label(line, start, end, folded):
            continue
        if _embedded(line, start):
            continue
        labels.append(
            (start, end, kinds.get(re.sub(r"[ \t\-_]+", " ", match.group("label")), "token"))
        )
    for start, end, kind in labels:
        if kind == "login":  # Admin-Zugang: admin / V, 管理画面のログインは admin / V です
            login_value = _login_pair(line, start, end, example)
            if login_value is not None:
                yield "password", login_value
                return
            continue
        found = after.match(line, end)
        if found is not None:
            quoted = found.group("qv") is not None
            value = _clean(found.group("qv") or found.group("uv"), quoted)
            value = _split_pair(value, line[found.end() :])
            if found.group("sep").strip() == "=" and "&" in value:
                value = _QUERY_TAIL.sub("", value)  # ?user=u&password=V&useSSL=false
            if _HASH_NAME_END.search(found.group("bridge")):
                continue  # key fingerprint SHA256:<base64>, checksum (MD5): <hex>
        else:
            bare = _BARE.match(line, end)
            if bare is None or kind not in STRONG:
                continue
            quoted = bare.group("qv") is not None
            value = _clean(bare.group("qv") or bare.group("uv"), quoted)
            pin = kind == "pin" and _digit_code(value)
            shaped = _short_password(value) or _password_shaped(value)
            if not (shaped or generic_value_random(value) or pin):
                continue
        if _HEX.fullmatch(value) and len(value) >= 32 and _digest_words(line, folded):
            continue  # SHA-256 checksum of the credentials bundle: <hex> (a digest)
        if credential_value(value, kind, example=example):
            direct = value.isdigit() or _digit_code(value) or kind == "phrase"
            yield (DIRECT_KIND if direct else kind), value  # detect-secrets drops digits
            return
    for match in _TOKEN_RUN.finditer(line):
        value = match.group("uv")
        rest = line[: match.start()] + " " + line[match.end() :]
        if _provider_token(value) and _TOKEN_WORDS.search(rest) and not _DIGEST_WORDS.search(rest):
            if value.count("-") >= 2 and _CACHE_KEY.fullmatch(value):
                continue  # Linux-node-<sha256>: a cache key, by its shape
            yield "token", value
            return
    yield from _near(line, folded, [label for label in labels if label[2] != "login"], example)[:1]


def table_rows(text: str) -> Iterator[tuple[int, str, str]]:
    """(line start, kind, value) for each Markdown table row of ``text`` holding an account
    and a password (:func:`_table_pair`); one regex pass, run on prose files only."""
    for row in _TABLE_ROW.finditer(text):
        for kind, value in _table_pair(row.group(), example_line(row.group())):
            yield row.start(), kind, value
            break


def _table_pair(line: str, example: bool) -> Iterator[tuple[str, str]]:
    """A table row holding an account and, in the next cell, a password-shaped value
    (``| Grafana | admin | V |``): the ``user / secret`` pair in a table."""
    cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
    for account, value in zip(cells, cells[1:], strict=False):
        if not _ACCOUNT.fullmatch(account) or not _password_shaped(value):
            continue
        if _short_password(value) or generic_value_random(value):
            if credential_value(value, "password", example=example):
                yield "password", value
                return


def _near(
    line: str, folded: str, secret_labels: list[tuple[int, int, str]], example: bool
) -> list[tuple[str, str]]:
    """The label model's last reading: a credential-shaped word near a label, on either side.

    People name a secret and give it in any order and with any words between
    (``ich habe V als Passwort gesetzt``, ``Redis का पासवर्ड … बदलकर V कर दिया``,
    ``- **Passwort:** `V```, ``PIN 6943359``). So every ASCII run on the line
    within :data:`NEAR_CHARS` of a label is read, nearest first, and the value
    must carry its own evidence, stricter than after a separator: a password is
    mixed case with a digit or a symbol (:func:`_password_shaped`), a token is
    long and random, a PIN is digits, an app password is four groups of four
    letters. A line naming a digest, an id or a cache (any language) is read for
    passwords only. Each value still meets :func:`credential_value`.
    """
    labels = list(secret_labels)  # (start, end, kind) kept by _candidates; no "login" (an
    # account's word names no secret of its own)
    for match in islice(_compound().finditer(folded), MAX_LABELS):  # Initialpasswort
        start, end = match.span()
        inside = (
            start and folded[start - 1].isalpha() or end < len(folded) and folded[end].isalpha()
        )
        if inside:
            labels.append((start, end, "password"))
    for match in islice(_CAMEL_LABEL.finditer(line), MAX_LABELS):  # AppSecret, apiKey
        labels.append((match.start(1), match.end(1), _CAMEL_KINDS[match.group(1).lower()]))
    if not labels:
        return []
    digest: bool | None = None  # searched once a run reaches _judge (most lines: never)
    nearest = _Nearest(labels)
    found: list[tuple[int, int, str, str]] = []  # (distance, order, kind, value)
    if any(kind == "password" for _, _, kind in labels):
        for grouped in _GROUPED.finditer(line):
            near = nearest.of(*grouped.span())
            if near is not None:
                found.append((near[0], len(found), DIRECT_KIND, grouped.group()))
    reads: list[tuple[int, int, int, int, str, bool, str]] = []
    for run in _VALUE_RUN.finditer(line):
        start, end = run.span()
        value = run.group().strip("*").rstrip(".,:;")
        if not _may_judge(value, None):
            continue  # the prose words of a line: no label could take them
        near = nearest.of(start, end)
        if near is not None and near[0] <= NEAR_CHARS:
            reads.append((near[0], len(reads), start, end, near[1], near[2], value))
    reads.sort()  # nearest first; a line's cost is its runs, each judged once at most
    for distance, _, start, end, kind, after_label, value in reads:
        if found and found[0][0] <= distance:
            break
        if not _may_judge(value, kind):
            continue  # the cheap tests first: most runs near a label are words
        if not after_label and _HEX.fullmatch(value):
            continue  # bare hex is weak evidence: only after its label (`allow <hex> --rule x-pat`)
        if value.rstrip("*#").isdigit() and _not_a_code(
            line, start, end, value, distance, after_label
        ):
            continue  # a phone number (0171 5551234), a time of day or a count farther off
        if digest is None:
            digest = _digest_words(line, folded)
        judged = _judge(value, kind, digest=digest, example=example, after_label=after_label)
        if judged is None:
            continue
        if _EXAMPLE_BEFORE.search(line, max(0, start - 24), start):
            continue  # "at least one digit, e.g. Abc12345!": the docs' example of a password
        found.append((distance, -1, judged, value))
        break
    found.sort()
    return [(kind, value) for _, _, kind, value in found]


PIN_CHARS = 40
"""How far a code in digits may be from its label (``El PIN de la puerta del CPD es 20305``);
four digits that read as a time of day (``0300``) only half as far."""
_TIME = _r(r"(?:[01]\d|2[0-3])[0-5]\d")
_SEP_BEFORE = _r(r"[:=：][ \t]*$")


def _not_a_code(
    line: str, start: int, end: int, value: str, distance: int, after_label: bool = True
) -> bool:
    """Digits near a code's label that are not the code: too far, a time of day farther than
    :data:`PIN_CHARS` / 2, or beside another group of digits (a phone number, a figure)."""
    reach = PIN_CHARS // 2 if _TIME.fullmatch(value) else PIN_CHARS
    if distance > reach and not _SEP_BEFORE.search(line, max(0, start - 3), start):
        return True  # (pin for the yubikey on the release laptop = 546572: a separator's value)
    if _SEQUENTIAL.search(value) or _COUNTED.search(line, max(0, start - 12), start):
        return True  # 1234 (a default, not a code); ticket 48213, envelope 4412, #3
    if re.match(r"[ \t.\-/]?\d", line[end : end + 2]) or re.search(
        r"\d[ \t.\-/]?$", line[max(0, start - 2) : start]
    ):
        return True
    if distance <= 2 or not after_label or _introduced(line, start):
        return False
    if _TIME.fullmatch(value):
        return True  # Larmet gick 0300: a time needs its code introduced
    return _CLAUSE.search(line, start - distance, start) is not None  # (a noun phrase runs on)


_CLAUSE = _r(r"[,;.!?()\[\]、，。；]")
"""Punctuation between a label and digits: the digits belong to another phrase (``im Tresor
(1Password), Eintrag 4821``), unless they are introduced as the code."""


_INTRODUCER = _r(
    r"(?i)(?:[:=：—–\-]|" + _COPULAS + r"|är|er|on|ist|c'est|lautet|wynosi|brzmi|est"
    r"|mit|with|med|con|avec|com|ile|dengan|với|по|через|بـ|से|mittels"
    r"|code|codes|kod|kodu|kodem|koden|код|кодом|kode|código|codigo|codice|mã|mã số|số"
    r"|number|nummer|numéro|número|numer|номер|رقم|رمز|कोड|नंबर|pin)"
)


def _introduced(line: str, start: int) -> bool:
    """Whether the digits at ``start`` are introduced as a code: straight after a script
    without spaces (``は842724*``), or after a separator, a copula, a preposition, a short
    word or a word for code or number (``lautet 9517``, ``mit 5960``, ``kodem 6230``); not
    after another noun (``Eintrag 4821``, ``dossier 2231``, ``zarf 4412``)."""
    head = line[max(0, start - 24) : start]
    if not head[-1:].isspace():
        return True
    words = head.split()
    if not words:
        return True
    word = words[-1].strip("*_`'\"«»“”()[],.")
    if word[-1:] and _is_unspaced(word[-1]):
        return True  # 비밀번호(도어락)는 V: a particle glued to the word
    return len(word) <= 2 or _INTRODUCER.fullmatch(word.lower()) is not None


_SEQUENTIAL = _r(r"^(?:0123|1234|2345|3456|4567|5678|6789|9876|8765|7654|6543|5432|4321|3210)")
_COUNTED = _r(
    r"(?i)(?<![^\W\d_])(?:ticket|issue|bug|case|pr|mr|order|invoice|envelope|batch|room|port|build"
    r"|step|page|line|no\.?|nr\.?|n°|nº|#|bilet|talep|заявк[аи]|тикет|工单|工單|チケット|티켓"
    # a telephone extension, a model or type, a floor or room, a page, a contract
    r"|ext\.?|extension|extensión|extensão|poste|durchwahl|wewn\.?|доб\.?|добавочный|ramal"
    r"|dahili|máy lẻ|内線|分机|分機|내선|typ|type|model|modell|modelo|modèle|модель|serie|series"
    r"|raum|sala|salle|pokój|комната|phòng|oda|etage|piso|étage|piętro|этаж|seite|página|strona"
    r"|страница|vertrag|contrato|contrat|umowa|договор)[ \t:#№.]*$"
)
"""A number that counts or names something (``ticket 48213``, ``envelope 4412``, ``extensión
4821``, ``Typ 5560``), not a code."""


class _Nearest:
    """The label nearest a span, by bisection (a line's labels sorted once): (distance,
    kind, whether the label is before the span), or None when a label overlaps the span."""

    def __init__(self, labels: list[tuple[int, int, str]]) -> None:
        import bisect
        from itertools import accumulate

        self._bisect = bisect
        self.by_start = sorted(labels)
        self.starts = [a for a, _, _ in self.by_start]
        self.reach = list(accumulate((b for _, b, _ in self.by_start), max))
        self.by_end = sorted((b, kind) for _, b, kind in labels)
        self.ends = [b for b, _ in self.by_end]

    def of(self, start: int, end: int) -> tuple[int, str, bool] | None:
        bisect = self._bisect
        k = bisect.bisect_left(self.starts, end)  # labels starting before the span ends
        if k and self.reach[k - 1] > start:
            return None  # a label overlaps the span
        options = []
        if k < len(self.starts):  # the first label after the span (the least kind on a tie)
            options.append((self.starts[k] - end, self.by_start[k][2], False))
        j = bisect.bisect_right(self.ends, start)
        if j:  # the label ending last before the span (the least kind on a tie)
            first = bisect.bisect_left(self.ends, self.ends[j - 1])
            options.append((start - self.ends[j - 1], self.by_end[first][1], True))
        return min(options) if options else None


@functools.cache
def _compound() -> re.Pattern[str]:
    """A password label inside a compound or an inflected word (``Initialpasswort``,
    ``şifresiyle``, ``hasłem``): the language builds words around it."""
    words = sorted(
        {caseless_fold(label) for table in LABELS.values() for label in table.get("password", ())
         if len(label) >= 7 and label.replace(" ", "").isalpha() and not _is_unspaced(label)},
        key=len, reverse=True,
    )  # fmt: skip
    return re.compile("|".join(map(re.escape, words)))


def _may_judge(value: str, kind: str | None) -> bool:
    """False when :func:`_judge` surely takes nothing from ``value`` under a label of ``kind``
    (None: of any kind); cheap tests only, run before the dear ones.

    Digits (a PIN, a door code ``5939#``, a numeric password) are read at 4-12; digit
    groups (``3266-6486-8135``) at any length; a passphrase (lower-case words joined by
    ``-_.``) from :data:`PASSPHRASE_MIN` characters; anything else needs 8 characters
    (:func:`_password_shaped`), and under 16 only a strong label takes it, mixed case.
    """
    core = value.rstrip("*#")
    if core.isdigit():
        return 4 <= len(core) <= 12
    if len(value) >= 16:
        return True
    if kind in (None, "pin") and "-" in core and core.replace("-", "").isdigit():
        return True
    if len(value) < 8:
        return False
    if kind in (None, "phrase") and len(value) >= PASSPHRASE_MIN and not value.isalnum():
        return True
    if kind is not None and kind not in STRONG or value.isalpha():
        return False
    if value.islower() and len(value) <= 19 and (value[-1:].isdigit() or not value[-1:].isalnum()):
        return _HUMAN_PASSWORD.fullmatch(value) is not None  # pepper*32, kiwi#862
    return not (value.islower() or value.isupper())  # (no cased letter: neither is True)


def _judge(
    value: str, kind: str, *, digest: bool, example: bool, after_label: bool = True
) -> str | None:
    """The kind a word near a label of ``kind`` is a credential of, or None. A UUID is an id
    unless its label comes first (``secret key <uuid>``, not ``<uuid> … storage keys``)."""
    if kind in ("password", "secret") and _numbered_phrase(value):
        kind = "phrase"
    if kind == "phrase":
        if _PASSPHRASE.fullmatch(value):
            return DIRECT_KIND if credential_value(value, "phrase", example=example) else None
        kind = "password"
    if kind == "wifi":
        if value.isdigit() or not credential_value(value, "wifi", example=example):
            return None
        kind = "password"
    if kind == "pin" and not value.isdigit() and _digit_code(value):
        value = value.rstrip("*#")
        if "-" in value:  # 3266-6486-8135: a recovery code in groups
            return None if digest else DIRECT_KIND
    if value.isdigit():
        if _DATE.fullmatch(value):
            return None  # 20240105
        if kind == "pin" and 4 <= len(value) <= 10 and len(set(value)) > 2:
            return None if digest or _YEAR.fullmatch(value) else DIRECT_KIND
        if kind == "password" and 5 <= len(value) <= 10 and len(set(value)) > 2:
            return None if digest else DIRECT_KIND
        return None
    if kind in ("secret", "token") and not digest and _UUID.fullmatch(value):
        if not after_label:
            return None
        return DIRECT_KIND if kind == "secret" or not example else None
    if _NAMESPACED.fullmatch(value) or _FINGERPRINT.match(value):
        return None
    if kind in ("password", "secret") and _human_password(value):
        if digest and not after_label:
            return None
        return kind if credential_value(value, "password", example=example) else None
    if kind in STRONG and _password_shaped(value) and not _word_with_digit(value):
        if digest and not after_label:
            return None  # <id>, секрет в Lockbox: on a line naming an id, the label comes first
        return kind if credential_value(value, "password", example=example) else None
    if digest or len(value) < 16 or not credential_value(value, "token", example=example):
        if digest or not (_HEX.fullmatch(value) and 32 <= len(value) <= 128):
            return None
        return "token"
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return "token" if mixed or len(value) >= 32 else None  # a far word: mixed case or long


_DIGIT_CODE = _r(r"\d{4,12}[*#]?|\d{3,5}(?:-\d{3,5}){1,3}")
_PASSPHRASE = _r(r"[a-z]{3,12}\d{0,4}(?:[-_.][a-z]{3,12}\d{0,4}){2,7}(?:[-_.]\d{1,4})?")
_NUMBERED_PHRASE = _r(
    r"[a-z]{3,12}(?P<sep>[-_.])[a-z]{3,12}(?:(?P=sep)[a-z]{3,12}){1,6}(?P=sep)\d{1,4}"
)
"""A passphrase a password manager makes (``fjord-comet-sierra-60``, ``pixel.thistle.falcon.56``):
three or more lower-case words and a number, one separator throughout. Under a password
label it is the password, near or far (a word list without the number is not taken there).
A slug of a page, a branch or a runbook (``fix-reset-email-41``, ``ops.runbooks.rotation.2``)
is made of the words :data:`_SLUG_WORDS` holds and is not one."""
_SLUG_WORDS = frozenset(
    {"fix", "fixes", "hotfix", "feat", "feature", "bug", "bugfix", "branch", "release", "draft",
     "doc", "docs", "wiki", "page", "pages", "notes", "readme", "guide", "howto", "runbook",
     "runbooks", "policy", "policies", "rule", "rules", "regeln", "reset", "rotation", "rotate",
     "email", "mail", "ticket", "issue", "issues", "config", "setup", "test", "tests", "intern",
     "internal", "security", "sicherheit", "securite", "seguridad", "sicurezza", "mots", "passe",
     "password", "passwords", "passwort", "login", "auth", "user", "users", "admin", "team",
     "office", "floor", "printer", "queue", "ops", "infra", "deploy", "staging", "prod", "dev",
     "main", "master", "update", "upgrade", "migration", "step", "steps", "part", "chapter",
     "section", "version", "build", "job", "task", "sprint", "week", "plan", "spec", "template",
     "change", "changes", "changelog", "log", "logs", "entry", "entries", "record", "item",
     "items", "list", "folder", "file", "files", "note", "vault", "access", "guest", "network",
     "shared", "logins", "account", "accounts"}
)  # fmt: skip


_HUMAN_PASSWORD = _r(
    r"(?P<word>[A-Za-z][A-Za-z0-9@$]{2,11})(?P<mark>[-_.!?#$%&*+=@~^]{1,2})\d{2,5}"
    r"(?P<tail>[-_.!?#$%&*+=@~^]{0,2})"
)
"""A password as people make one, lower case allowed: a word (``pepper``, ``tig3r``,
``qu@rtz``), a mark and a number (``pepper*32``, ``kiwi#862``, ``lem0n.5313``). Under a password
label, near or far, it is the password; an algorithm's or a slug's word with a number
(``aes-256``, ``bcrypt-12``, ``issue-42``) is not."""
_TECH_WORDS = frozenset(
    {"aes", "rsa", "dsa", "ecdsa", "bcrypt", "scrypt", "argon", "argon2", "pbkdf", "pbkdf2",
     "hmac", "des", "utf", "iso", "rfc", "tls", "ssl", "http", "https", "port", "min", "max",
     "len", "length", "chars", "char", "room", "gate", "level", "round", "rounds", "cost",
     "iter", "iterations", "bits", "bit", "node", "python", "java", "php", "ruby", "gcc", "pr",
     "jira", "cve", "pep", "ubuntu", "debian", "alpine", "centos", "rhel", "windows", "macos",
     "varchar", "int", "days", "day", "hours", "weeks", "months", "years", "zxcvbn"}
)  # fmt: skip


def _human_password(value: str) -> bool:
    """:data:`_HUMAN_PASSWORD`, its word neither a slug's nor an algorithm's."""
    match = _HUMAN_PASSWORD.fullmatch(value)
    if match is None or sum(c.isalpha() for c in match.group("word")) < 3:
        return False
    word = match.group("word").lower()
    if match.group("mark") in ("-", "_") and not match.group("tail") and word.isalpha():
        return False  # issue-4821, soporte-8812, days-90: a ticket's or an item's id
    return word not in _SLUG_WORDS and word not in _TECH_WORDS


def _numbered_phrase(value: str) -> bool:
    """:data:`_NUMBERED_PHRASE`, and none of its words a slug's (:data:`_SLUG_WORDS`)."""
    if _NUMBERED_PHRASE.fullmatch(value) is None:
        return False
    return not any(word in _SLUG_WORDS for word in re.split(r"[-_.]", value.lower()))


PASSPHRASE_MIN = 11
"""The shortest :data:`_PASSPHRASE` (three words of three letters, two separators)."""
"""A passphrase of three or more lower-case words joined by dashes (``coryar-teknox-tortek46``)."""
_CODE = _r(r"(?<![\w\-])[a-z0-9]{4,6}-[a-z0-9]{4,6}(?![\w\-])")
_LOGIN_PAIR = _r(
    r"(?<![\w/.:])[A-Za-z_][\w.\-@]{0,40}(?:[ \t]+/[ \t]+|[ \t]*／[ \t]*)"
    r"(?:[\"'`](?P<qv>[^\"'`\n/]{6,64})[\"'`]|(?P<uv>(?:(?!/)[!-~]){6,64}))"
)


def digest_on_line(value: str, line: str) -> bool:
    """A hex value of a digest's length (32+) on a line that names a digest or an id."""
    if len(value) < 32 or _HEX.fullmatch(value) is None:
        return False
    return _digest_words(line, caseless_fold(line))


def _name_joined(value: str) -> bool:
    """:data:`_NAME_JOINED` with at most four digits in all."""
    return sum(c.isdigit() for c in value) <= 4 and _NAME_JOINED.fullmatch(value) is not None


def _base64_blob(value: str) -> bool:
    """A long base64 key (an Azure storage key may start with ``/``), not a path."""
    if len(value) < 40 or not _BASE64.fullmatch(value):
        return False
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    return any(c.isdigit() for c in value) and max(map(len, value.split("/"))) >= 16


_BASE64 = _r(r"[A-Za-z0-9+/]+={0,2}")


def _digit_code(value: str) -> bool:
    """A door, alarm or safe code (``5939*``, ``433678#``) or a recovery code in digit groups."""
    return _DIGIT_CODE.fullmatch(value) is not None


def _recovery_codes(line: str, matches: list[re.Match[str]], kinds: dict[str, str]) -> str | None:
    """2FA recovery codes in a list (``hpqie-bj7gf, 0qig3-1nymb``) on a line naming a code."""
    pin = any(kinds.get(re.sub(r"[ \t\-_]+", " ", m.group("label"))) == "pin" for m in matches)
    if not pin or line.count("-") < 2:
        return None
    codes = [c for c in _CODE.findall(line) if any(ch.isdigit() for ch in c)
             and any(ch.isalpha() for ch in c)]  # fmt: skip
    return ", ".join(codes) if len(codes) >= 2 else None


def _login_pair(line: str, start: int, end: int, example: bool) -> str | None:
    """The password of a ``user / password`` pair after an account's label, or just before
    it (``sync_bot / V でログイン``, ``用 dev01 / V 登入``: the order of Japanese, Korean and
    Chinese)."""
    pair = _LOGIN_PAIR.search(line, end, end + 80)
    if pair is None:
        before = [m for m in _LOGIN_PAIR.finditer(line, max(0, start - 80), start)
                  if len(line[m.end() : start].strip()) <= 2]  # fmt: skip
        if not before:
            return None
        pair = before[-1]
    quoted = pair.group("qv") is not None
    value = _clean(pair.group("qv") or pair.group("uv"), quoted)
    if not (_short_password(value) or _password_shaped(value)):
        return None
    return value if credential_value(value, "password", example=example) else None


def prose_password(value: str) -> bool:
    """A password as people make one (``dulvenhus.Fiqjexpim87``, ``~iITLSZ~k_lpa9B``,
    ``@O#qn#h0yozRPVe``): password-shaped with a digit; under a strong label in prose it is
    not the attribute reference, home path or mention the code checks take it for."""
    if not _password_shaped(value) or not any(c.isdigit() for c in value):
        return False
    if value.startswith(("~/", "$", "%", "{", "<", "(", "\\")) or "/" in value:
        return False  # a path (kv/prod/Admin2), a URL, a variable
    return _MENTION.fullmatch(value) is None


_QUERY_TAIL = _r(r"&[A-Za-z_]\w*=.*$")
_MENTION = _r(r"@?[A-Za-z_]\w*")


def _word_with_digit(value: str) -> bool:
    """A name with one capital and one digit in it (``Argon2id``, ``Ed25519``, ``Python3``):
    a far word needs more than that to be a password."""
    if not value.isalnum():
        return False
    return sum(c.isupper() for c in value) < 2 and sum(c.isdigit() for c in value) < 2


def _password_shaped(value: str) -> bool:
    """8-64 characters, upper and lower case, and a digit or a symbol: not a word or an id."""
    if not 8 <= len(value) <= 64:
        return False
    upper = any(c.isupper() for c in value)
    lower = any(c.islower() for c in value)
    other = any(not c.isalpha() for c in value)
    return upper and lower and other and not _camel_words(value)


def _embedded(line: str, start: int) -> bool:
    """The label's letters sit inside a random run (``…R1A76Y8P6Y<Tf…$pw{(f~…``, base85 data):
    the word before it, up to the label, holds two digits or symbols."""
    if start and line[start - 1] in "?&;":
        return False  # a parameter of a URL's query (?user=u&password=V) or of a DSN
    head = max(line.rfind(" ", max(0, start - 64), start) + 1, start - 64, 0)
    word = line[head:start]
    if not word.isascii():  # Husyar!348がGrafanaのadminパスワード: a script without spaces
        word = _ASCII_TAIL.search(word).group()  # type: ignore[union-attr]
    return sum(c.isdigit() or c in _BLOB_MARKS for c in word) >= 2


_ASCII_TAIL = _r(r"[\x00-\x7f]*$")


_BLOB_MARKS = frozenset("$%^&{}<>~@#!|\\")


def _digest_label(line: str, start: int, end: int, folded: str | None = None) -> bool:
    """``cache_key``, ``key_sha256``, ``etag key``: the label names a digest, not a secret.

    ``folded`` (the line's :func:`caseless_fold`, when the caller has it) skips the
    search where none of the digest words' literal heads occurs.
    """
    low = max(0, start - 24)  # (the longest digest words: идентификатор, identificador)
    if folded is not None and not _digest_heads_in(folded[low : end + 12]):
        return False
    for match in _DIGEST_WORDS.finditer(line, low, end + 12):
        gap = line[match.end() : start] if match.end() <= start else line[end : match.start()]
        if match.start() < end and start < match.end() or _ADJACENT.fullmatch(gap):
            return True
    return False


_ADJACENT = _r(r"[\s_\-.:]*(?:[^\W\d_]{1,3}[\s_\-.]+)?")
"""Between a digest word and a label: nothing, or one short word (``clave de caché``)."""


def _digest_words(line: str, folded: str) -> bool:
    """``_DIGEST_WORDS.search(line)``, skipped where none of their literal heads occurs in
    ``folded`` (the line's :func:`caseless_fold`)."""
    return _digest_heads_in(folded) and _DIGEST_WORDS.search(line) is not None


def _digest_heads_in(folded: str) -> bool:
    """Whether ``folded`` (caseless-folded text) holds the literal head of one of
    :data:`_DIGEST_WORDS`' alternatives: a match there needs one, so where none occurs
    the search (a long alternation ``re`` tries at every position) is skipped."""
    return any(map(folded.__contains__, _digest_heads()))


@functools.cache
def _digest_heads() -> tuple[str, ...]:
    heads = literal_heads(_DIGEST_WORDS.pattern, _DIGEST_WORDS.flags)
    if heads is None:  # pragma: no cover - a word list the reading below cannot follow
        return ("",)  # "" is in every text: the search always runs
    folded = {caseless_fold(head) for head in heads}
    return tuple(sorted(h for h in folded if not any(o != h and o in h for o in folded)))


def _provider_token(value: str) -> bool:
    """A bare token beside a token word or a provider's name: long, mixed and random."""
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    if _HEX.fullmatch(value) or looks_like_placeholder(value):
        return False  # bare hex is a digest far more often than a key
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    from teamsync.security.rules import _entropy

    return _entropy(value) >= 4.0
