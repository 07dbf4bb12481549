"""Per-script and per-language text handling for lexical recall (no model, no download).

* **Language** (:func:`detect`): by script first (Hangul → ``ko``; kana → ``ja``;
  Han without kana → ``zh``), then, for Latin text, by votes of each
  language's stop words and its telling letters (``ı ş ğ`` for Turkish,
  ``ã õ`` for Portuguese, ``ñ ¿ ¡`` for Spanish). English wins ties: technical
  text mixes English into every language.
* **Stop words** (:data:`STOP`): one list per language. A word written in
  capitals (``WHO``, ``IT``) is an acronym and kept; one-letter Latin words are
  dropped.
* **Stemming** (:func:`stem`): Snowball, through PyStemmer (C) when it is
  installed, else ``snowballstemmer`` (pure Python, the same algorithms and the
  same stems), for the languages Snowball covers. English is left to FTS5's
  own porter tokenizer, as before.
* **Hangul** (:func:`strip_particle`): a trailing particle or common ending
  (``토큰을`` → ``토큰``) is cut when at least two syllables remain.
* **Han and kana** (:func:`cjk_units`): FTS5's ``unicode61`` keeps a run of
  them as one token, so a word inside a run is never found. A run is split
  into Han, katakana and hiragana segments; Han becomes character bigrams (a
  lone character stays a unigram), katakana words stay whole, hiragana (mostly
  grammar in Japanese) is dropped. Han function characters split a run first.

Pure functions; the stemmer modules are imported on first use only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_SEGMENT = re.compile(
    r"(?P<han>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005]+)"
    r"|(?P<kata>[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]+)"
    r"|(?P<hira>[\u3040-\u309f]+)"
)

CJK_LANGS = frozenset({"zh", "ja"})

STOP: dict[str, frozenset[str]] = {
    "en": frozenset(
        """a about after again all also am an and any are as at be been before being both but
        by can could did do does doing done for from get got had has have having he her here
        how i if in into is it its just let me more most my no nor not of off on once only or
        other our out over own same she should so some such than that the their them then
        there these they this those through to too under until up very via was we were what
        when where which while who whom why will with would you your""".split()
    ),
    "es": frozenset(
        """a al algo algún alguna algunas alguno algunos ante antes aquí así cada como con
        contra cual cuál cuales cuáles cuando cuándo cómo de del desde donde dónde dos el él
        ella ellas ellos en entre era es esa ese eso esta está están este esto estos estas fue
        ha hace hacer hay la las le les lo los más me mi mis mucho muy nada ni no nos nosotros
        o otra otro para pero poco por porque qué que quien quién se sea según ser si sí sin
        sobre son su sus también tan tanto te tengo tiene tienen todo todos tu tú un una uno
        unos unas y ya yo debo debe debemos puedo puede necesito vamos voy hay""".split()
    ),
    "pt": frozenset(
        """a à ao aos as às até com como da das de do dos e é ela elas ele eles em entre era
        essa esse isso esta está estão este estou eu foi há isto já lhe mais mas me meu minha
        muito na nas não nem no nos nós o os ou para pela pelas pelo pelos por porque qual
        quais quando que quem se sem ser seu sua são também te tem têm tenho um uma umas uns
        vai vou você vocês preciso precisa devo deve posso pode onde qual sobre fazer faz""".split()
    ),
    "tr": frozenset(
        """acaba ama ancak artık aslında az bana bazı ben beni benim bir biraz birçok biz bize
        bu buna bunda bundan bunu bunun da daha de değil diye en gibi hangi hangisi hem hep
        her hiç için ile ise kadar ki kim mı mi mu mü nasıl ne neden nerede nereye niye o ona
        onlar onu onun olan olarak oldu olur sen siz şey şu şunu tüm ve veya ya yani zaten
        var yok mı misin miyim lazım gerek gerekiyor nedir neler nelerdir""".split()
    ),
    "fr": frozenset(
        """au aux avec ce ces cette dans de des du elle en est et il ils je la le les leur
        lui ma mais me mes moi mon ne nos notre nous on ou où par pas pour qu que quel quelle
        qui sa se ses son sont sur ta te tes toi ton tu un une vos votre vous y été être
        avoir fait faire comment quoi""".split()
    ),
    "de": frozenset(
        """aber als am an auch auf aus bei bin bis bist da das dass dein dem den der des die
        dies doch du ein eine einem einen einer es für hat ich ihr im in ist ja kann mein mit
        nach nicht noch nur oder sein sich sie sind so über um und uns von vor war was wer
        wie wir wo zu zum zur muss wird werden""".split()
    ),
    "ko": frozenset(
        """그 그리고 그러나 그런데 그래서 하지만 및 등 또는 또 이 저 것 수 때 더 왜 뭐 무엇 무슨
        어떤 어떻게 언제 어디 어디서 누가 누구 있나요 있어요 있는 없는 하나요 해야 해야 하나
        해요 돼요 되나요 인가요 나요 알려줘 알려주세요 지금 제가 내가 우리 우리가 좀 전에""".split()
    ),
}
"""Per-language stop words (lower case). ``zh``/``ja`` use :data:`HAN_STOP` instead."""

HAN_STOP = frozenset(
    "的了吗呢吧啊是在和与及或把被这那哪么什怎我你他她它们就都也还又很请吗嗎麼這那們"
)
"""Han characters that are grammar, not content: a Han run is split at them."""

KO_PARTICLES = tuple(
    sorted(
        """은 는 이 가 을 를 에 의 와 과 도 만 로 으로 에서 에게 께서 부터 까지 처럼 보다 하고
        하나요 하나 할까요 하려면 하려고 하는지 해야 해야하나요 했나요 되나요 인가요 일까요 입니까
        이나 나 라도 에서는 으로는 에는 에도 로는 로도 이라 라고 이라고 한테 이랑 랑
        합니다 했다 했어요 해요 하는 하기 해야 하면 해서 하고 한다 된다 되는 됩니다 입니다 이다
        인가 인가요 나요 까요 을까 를까 할까 할 한 하지 했나 했는지 인지 는지""".split(),
        key=len,
        reverse=True,
    )
)
"""Trailing particles and endings cut from a Hangul word (longest first)."""
_PARTICLE_SET = frozenset(KO_PARTICLES)
_PARTICLE_SIZES = sorted({len(p) for p in KO_PARTICLES}, reverse=True)

_TELLING = {
    "tr": re.compile(r"[ıışğİ]"),
    "pt": re.compile(r"[ãõ]|ção|ções"),
    "es": re.compile(r"[ñ¿¡]|ción"),
    "de": re.compile(r"[äöß]"),
    "fr": re.compile(r"[èêàù]|œ"),
}

_PT_PLURAL = re.compile(r"(?:ões|ães)$")

SNOWBALL = {
    "es": "spanish",
    "pt": "portuguese",
    "tr": "turkish",
    "fr": "french",
    "de": "german",
}


def script_counts(text: str) -> tuple[int, int, int]:
    """How many Hangul, kana and Han characters ``text`` holds."""
    return len(_HANGUL.findall(text)), len(_KANA.findall(text)), len(_HAN.findall(text))


def detect(text: str) -> str:
    """The language of ``text``: ``ko``, ``ja``, ``zh``, or a Latin-script language (default ``en``)."""
    hangul, kana, han = script_counts(text)
    if hangul and hangul >= kana + han:
        return "ko"
    if kana:
        return "ja"
    if han:
        return "zh"
    words = [w.lower() for w in _LATIN_WORD.findall(text)]
    if not words:
        return "en"
    votes = {lang: 0.0 for lang in ("en", *SNOWBALL)}
    for word in words:
        for lang in votes:
            if word in STOP[lang]:
                votes[lang] += 1.0
    for lang, pattern in _TELLING.items():
        votes[lang] += 2.0 * len(pattern.findall(text))
    best = max(votes, key=lambda lang: (votes[lang], lang == "en"))
    return best if votes[best] > votes["en"] else "en"


def is_stop(word: str, original: str, lang: str) -> bool:
    """Whether a query word is noise: a one-letter Latin word, or a stop word that is no acronym."""
    if is_hangul(word):
        return word in _PARTICLE_SET or word in STOP["ko"] or strip_particle(word) in STOP["ko"]
    if len(word) < 2 and not _HAN.match(word):
        return True
    if len(original) >= 2 and original.isupper():
        return False  # WHO, IT, US: an acronym, not a function word
    return word in STOP["en"] or word in STOP.get(lang, frozenset())


@lru_cache(maxsize=16)
def _stemmer(lang: str) -> Callable[[list[str]], list[str]] | None:
    algorithm = SNOWBALL.get(lang)
    if algorithm is None:
        return None
    try:
        import Stemmer

        return Stemmer.Stemmer(algorithm).stemWords  # type: ignore[no-any-return]
    except ImportError:
        pass
    try:
        import snowballstemmer
    except ImportError:
        return None
    return snowballstemmer.stemmer(algorithm).stemWords  # type: ignore[no-any-return]


def fold(word: str) -> str:
    """Lower case that keeps Turkish ``İ`` a plain ``i`` (Python's lower() adds a combining dot)."""
    return unicodedata.normalize("NFC", word.replace("İ", "i")).lower()


def stem(words: list[str], lang: str) -> list[str]:
    """Snowball stems of ``words`` in ``lang`` (the words unchanged where Snowball has no stemmer)."""
    stemmer = _stemmer(lang)
    if lang == "pt":  # Snowball keeps -ção and -ções apart: make the plural singular first
        words = [_PT_PLURAL.sub("ão", w) for w in words]
    return stemmer(words) if stemmer is not None else list(words)


def strip_particle(word: str) -> str:
    """``토큰을`` → ``토큰``: cut one trailing particle/ending if two syllables or more remain.

    The longest particle that ends the word wins (as in :data:`KO_PARTICLES`' order): one set
    look-up per particle length, not one ``endswith`` per particle (a first build of 1,000
    Korean memories spent a third of its lexical time here).
    """
    for size in _PARTICLE_SIZES:
        if len(word) - size >= 2 and word[-size:] in _PARTICLE_SET:
            return word[:-size]
    return word


def cjk_units(run: str) -> list[str]:
    """The search units of a run of Han/kana: Han bigrams (lone Han characters as unigrams) and
    katakana words; hiragana is dropped."""
    out: list[str] = []
    for match in _SEGMENT.finditer(run):
        if match.group("han"):
            for piece in _split_han(match.group("han")):
                if len(piece) == 1:
                    out.append(piece)
                else:
                    out.extend(piece[i : i + 2] for i in range(len(piece) - 1))
        elif match.group("kata"):
            word = match.group("kata")
            if len(word) >= 2 and word != "ー" * len(word):
                out.append(word)
    return out


def _split_han(segment: str) -> Iterable[str]:
    piece: list[str] = []
    for char in segment:
        if char in HAN_STOP:
            if piece:
                yield "".join(piece)
            piece = []
        else:
            piece.append(char)
    if piece:
        yield "".join(piece)


_SCRIPT_RUN = re.compile(
    r"[\u3005\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]+"
    r"|[\uac00-\ud7a3]+"
    r"|[^\u3005\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7a3]+"
)


def split_scripts(word: str) -> list[str]:
    """``API모듈`` → ``API``, ``모듈``: a word split where it changes between Han/kana, Hangul and
    anything else."""
    return _SCRIPT_RUN.findall(word)


def has_cjk(word: str) -> bool:
    return bool(_HAN.search(word) or _KANA.search(word))


def is_hangul(word: str) -> bool:
    return bool(_HANGUL.search(word))


def normalized(text: str, lang: str) -> str:
    """What the index's ``norm`` column stores for a memory in ``lang``: Snowball stems of its
    Latin words (not for English), Hangul words without their particle, Han bigrams and
    katakana words, space-separated."""
    out: list[str] = []
    latin: list[str] = []
    for token in (p for t in re.findall(r"[^\W_]+", text) for p in split_scripts(t)):
        if has_cjk(token):
            out.extend(cjk_units(token))
        elif is_hangul(token):
            if token not in _PARTICLE_SET:
                out.append(strip_particle(token))
        elif lang in SNOWBALL and _LATIN_WORD.fullmatch(token):
            word = fold(token)
            if len(word) > 1 and word not in STOP[lang]:
                latin.append(word)
    if latin:
        out.extend(stem(latin, lang))
    return " ".join(out)
