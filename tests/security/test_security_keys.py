"""Key validation: a table of hostile keys, benign keys, and hypothesis properties."""

from __future__ import annotations

import ntpath
import posixpath
import unicodedata
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from teamsync.errors import KeyRejected
from teamsync.security.keys import (
    MAX_DEPTH,
    MAX_KEY_LENGTH,
    MAX_SEGMENT_LENGTH,
    find_collisions,
    find_prefix_clashes,
    fold_key,
    is_memory_key,
    key_clashes,
    key_problem,
    keys_problems,
    validate_key,
)

NUL = "contains NUL"
CTRL = "contains a control character"
SEP = "contains a line or paragraph separator"
BIDI = "contains a bidi control character"
INVISIBLE = "contains an invisible character"
URL = "URL-encoded traversal"
URL_CTRL = "URL-encoded control or invisible character"
OVERLONG = "URL-encoded overlong UTF-8"
DOTDOT = "contains '..' segment"
DOT = "contains '.' segment"
SEG_LONG = f"segment longer than {MAX_SEGMENT_LENGTH} bytes"
TRAIL = "segment ends with a dot or space"
GIT = "reserved name '.git'"
GIT_SHORT = "reserved name '.git' (its NTFS short name)"

INVISIBLE_CHARS: list[tuple[str, str]] = [
    # Default_Ignorable_Code_Point, format characters (Cf) and non-ASCII spaces
    ("\u00ad", "soft hyphen"),
    ("\u034f", "combining grapheme joiner"),
    ("\u115f", "Hangul choseong filler"),
    ("\u1160", "Hangul jungseong filler"),
    ("\u3164", "Hangul filler"),
    ("\uffa0", "halfwidth Hangul filler"),
    ("\u17b4", "Khmer vowel inherent AQ"),
    ("\u17b5", "Khmer vowel inherent AA"),
    ("\u180b", "Mongolian free variation selector one"),
    ("\u180e", "Mongolian vowel separator"),
    ("\u180f", "Mongolian free variation selector four"),
    ("\u200b", "zero-width space"),
    ("\u200c", "zero-width non-joiner"),
    ("\u200d", "zero-width joiner"),
    ("\u2060", "word joiner"),
    ("\u2061", "function application"),
    ("\u2062", "invisible times"),
    ("\u2063", "invisible separator"),
    ("\u2064", "invisible plus"),
    ("\u2065", "reserved default-ignorable"),
    ("\u206a", "inhibit symmetric swapping"),
    ("\u206b", "activate symmetric swapping"),
    ("\u206c", "inhibit Arabic form shaping"),
    ("\u206d", "activate Arabic form shaping"),
    ("\u206e", "national digit shapes"),
    ("\u206f", "nominal digit shapes"),
    ("\ufe00", "variation selector-1"),
    ("\ufe0f", "variation selector-16"),
    ("\ufeff", "zero-width no-break space (BOM)"),
    ("\ufff0", "reserved default-ignorable"),
    ("\u2800", "Braille pattern blank"),
    ("\u0600", "Arabic number sign (Cf)"),
    ("\u06dd", "Arabic end of ayah (Cf)"),
    ("\u070f", "Syriac abbreviation mark (Cf)"),
    ("\u08e2", "Arabic disputed end of ayah (Cf)"),
    ("\ufff9", "interlinear annotation anchor (Cf)"),
    ("\U000110bd", "Kaithi number sign (Cf)"),
    ("\U00013430", "Egyptian hieroglyph vertical joiner (Cf)"),
    ("\U0001bca0", "shorthand format letter overlap"),
    ("\U0001d173", "musical symbol begin beam"),
    ("\U000e0001", "language tag"),
    ("\U000e0100", "variation selector-17"),
    ("\U000e0fff", "reserved default-ignorable"),
]
SPACES = ["\u00a0", "\u1680", "\u2000", "\u2007", "\u200a", "\u202f", "\u205f", "\u3000"]

HOSTILE: list[tuple[str, str]] = [
    # empty, NUL and control characters (C0, DEL, C1)
    ("", "empty key"),
    ("\x00", NUL),
    ("a\x00.md", NUL),
    ("notes/x.md\x00.txt", NUL),
    ("a\nb.md", CTRL),
    ("a\rb.md", CTRL),
    ("a\tb.md", CTRL),
    ("\x1b[31mred.md", CTRL),
    ("a\x7fb.md", CTRL),
    ("a\x85b.md", CTRL),
    ("a\x9bb.md", CTRL),
    # separators, bidi overrides and invisible characters used to spoof names
    ("a\u2028b.md", SEP),
    ("a\u2029b.md", SEP),
    ("invoice\u202egpj.md", BIDI),
    ("a\u202ab.md", BIDI),
    ("a\u202db.md", BIDI),
    ("a\u2066b.md", BIDI),
    ("a\u2069b.md", BIDI),
    ("a\u200fb.md", BIDI),
    ("a\u061cb.md", BIDI),
    ("a\u200bb.md", INVISIBLE),
    ("a\u200cb.md", INVISIBLE),
    ("a\u200db.md", INVISIBLE),
    ("a\u00adb.md", INVISIBLE),
    ("a\u3164b.md", INVISIBLE),
    ("a\u206ab.md", INVISIBLE),
    ("a\u00a0b.md", "contains a non-ASCII space"),
    ("a%e2%80%8cb.md", URL_CTRL),
    ("a%c2%adb.md", URL_CTRL),
    ("\ufeffa.md", INVISIBLE),
    ("a\U000e0041b.md", INVISIBLE),
    ("\udcff.md", "contains a lone surrogate (name is not valid UTF-8)"),
    # URL encoding: single, double, triple, IIS %u, overlong UTF-8
    ("%2e%2e/x.md", URL),
    ("%2E%2E%2Fetc.md", URL),
    ("..%2fx.md", URL),
    ("a%2fb.md", URL),
    ("a%5cb.md", URL),
    ("%2e", URL),
    ("a/%2e%2e/b.md", URL),
    ("%252e%252e%252fx.md", URL),
    ("%25252e%25252e/x.md", URL),
    ("%%32%65%%32%65/x.md", URL),
    ("%u002e%u002e/x.md", URL),
    ("%uff0e%uff0e/x.md", URL),
    ("%ef%bc%8e%ef%bc%8e%ef%bc%8fx.md", URL),
    ("%44%3a/x.md", URL),
    ("%44%253ax.md", URL),
    ("%00.md", URL_CTRL),
    ("a%0a.md", URL_CTRL),
    ("a%e2%80%aeb.md", URL_CTRL),
    ("%c0%ae%c0%ae/x.md", OVERLONG),
    ("%c0%af.md", OVERLONG),
    ("%c1%9c.md", OVERLONG),
    ("%e0%80%ae%e0%80%ae/x.md", OVERLONG),
    ("%f0%80%80%ae.md", OVERLONG),
    ("%25c0%25ae%25c0%25ae/x.md", OVERLONG),
    ("%25252525252e.md", "URL encoding nested too deeply"),
    # NFKC normalization that yields '..', '/', '\' or NUL
    ("．．／x.md", "NFKC normalization yields '/'"),
    ("a／b.md", "NFKC normalization yields '/'"),
    ("a＼b.md", "NFKC normalization yields '\\'"),
    ("a\ufe68b.md", "NFKC normalization yields '\\'"),
    ("．．/x.md", "NFKC normalization yields '..'"),
    ("notes/．．", "NFKC normalization yields '..'"),
    ("\u2025/x.md", "NFKC normalization yields '..'"),
    ("\ufe30/x.md", "NFKC normalization yields '..'"),
    ("．", "NFKC normalization yields '.'"),
    ("a：b.md", "NFKC normalization yields a drive letter"),
    ("\u2a74.md", "NFKC normalization yields a drive letter"),
    ("％２ｅ％２ｅ/x.md", URL),
    # absolute paths, UNC, drive letters, backslashes, colons
    ("/etc/passwd", "absolute path"),
    ("/x.md", "absolute path"),
    ("\\x.md", "absolute path"),
    ("//server/share/x.md", "UNC prefix"),
    ("\\\\server\\share\\x.md", "UNC prefix"),
    ("C:x.md", "drive letter"),
    ("c:foo", "drive letter"),
    ("C:/Windows/x.md", "drive letter"),
    ("z:\\x.md", "drive letter"),
    ("notes\\x.md", "contains a backslash"),
    ("a\\..\\b.md", "contains a backslash"),
    ("x.md:Zone.Identifier", "contains ':' (NTFS alternate data stream)"),
    ("notes/x.md::$DATA", "contains ':' (NTFS alternate data stream)"),
    # dot segments and empty segments
    ("..", DOTDOT),
    ("../x.md", DOTDOT),
    ("notes/../../x.md", DOTDOT),
    ("notes/..", DOTDOT),
    (".", DOT),
    ("./x.md", DOT),
    ("notes/./x.md", DOT),
    ("a//b.md", "contains an empty segment ('//')"),
    ("notes/", "ends with '/'"),
    # lengths
    ("x" * 253 + ".md", SEG_LONG),
    ("é" * 127 + ".md", SEG_LONG),
    ("/".join(["a" * 200] * 6), f"key longer than {MAX_KEY_LENGTH} bytes"),
    ("日" * 342 + ".md", f"key longer than {MAX_KEY_LENGTH} bytes"),
    ("/".join(["a"] * (MAX_DEPTH + 1)), f"nested more than {MAX_DEPTH} levels deep"),
    # trailing dot or space (Windows strips them: aliasing)
    ("x.", TRAIL),
    ("x.md.", TRAIL),
    ("x.md ", TRAIL),
    ("notes. /x.md", TRAIL),
    # Windows device names, with extensions and superscript digits
    ("CON", "Windows-reserved name 'CON'"),
    ("con.md", "Windows-reserved name 'CON'"),
    ("notes/Aux.md", "Windows-reserved name 'AUX'"),
    ("nul.tar.md", "Windows-reserved name 'NUL'"),
    ("PRN .md", "Windows-reserved name 'PRN'"),
    ("COM1.md", "Windows-reserved name 'COM1'"),
    ("lpt9.md", "Windows-reserved name 'LPT9'"),
    ("COM¹.md", "Windows-reserved name 'COM¹'"),
    ("lpt³.md", "Windows-reserved name 'LPT³'"),
    ("CONIN$.md", "Windows-reserved name 'CONIN$'"),
    ("con/x.md", "Windows-reserved name 'CON'"),
    # characters Windows forbids
    ("a<b.md", "contains '<', which Windows forbids"),
    ("a>b.md", "contains '>', which Windows forbids"),
    ('a"b.md', "contains '\"', which Windows forbids"),
    ("a|b.md", "contains '|', which Windows forbids"),
    ("why?.md", "contains '?', which Windows forbids"),
    ("a*.md", "contains '*', which Windows forbids"),
    # reserved names of our own and of git
    (".git/config", "reserved name '.git'"),
    (".GIT/hooks/x.md", "reserved name '.git'"),
    (".teamsync-tmp-0a1b.md", "uses teamsync's temp-file prefix '.teamsync-tmp-'"),
    # .git by its HFS+ (ignorables inside), Windows and NTFS spellings (CVE-2014-9390 class)
    (".g\u200cit/config", GIT),
    (".\u200dgit/hooks/x.md", GIT),
    (".gi\u200et/x.md", GIT),
    (".git\ufeff/x.md", GIT),
    (".g\u206ait/x.md", GIT),
    ("notes/.GI\u200bT/x.md", GIT),
    (".git./x.md", GIT),
    (".git . ./x.md", GIT),
    (".git::$INDEX_ALLOCATION/x.md", GIT),
    (".git:$I30:$INDEX_ALLOCATION/x.md", GIT),
    ("GIT~1/config", GIT_SHORT),
    ("git~1/hooks/x.md", GIT_SHORT),
    ("notes/Git~2/x.md", GIT_SHORT),
    ("GIT~1./x.md", GIT_SHORT),
    (".gıt/x.md", GIT),
    (".GİT/x.md", GIT),
    ("．ｇｉｔ/x.md", GIT),
    # not NFC: two spellings of one name
    ("cafe\u0301.md", "not NFC-normalized"),
    ("notes/A\u030a.md", "not NFC-normalized"),
    ("\u212b.md", "not NFC-normalized"),
]

BENIGN = [
    "MEMORY.md",
    "a.md",
    "notes/db.md",
    "notes/deep/er/still/x.md",
    "notes/café.md",
    "日本語.md",
    "v1.2.notes.md",
    "user_role.md",
    "feedback-testing.md",
    ".hidden.md",
    "..hidden.md",
    "a..b.md",
    "a b.md",
    "100%.md",
    "50%off.md",
    "a%20b.md",
    "ﬁle.md",
    "なぜ？.md",
    "メモ：設定.md",
    "Ａ.md",
    "party 🎉.md",
    "RTK-ı.md",
    "İstanbul.md",
    "git~1.md",
    "gitops/x.md",
    ".github/x.md",
    ".gitignore.md",
    "my.git/x.md",
    "console.md",
    "COM10.md",
    "CON-notes.md",
    "Ωmega/Straße.md",
    "x" * 252 + ".md",
    "é" * 126 + ".md",
    "/".join(["a"] * MAX_DEPTH),
    "/".join(["b" * 254] * 4) + "/" + "c" * 4,
]


def test_table_is_large_and_covers_every_reason() -> None:
    assert len(HOSTILE) >= 60
    assert len({reason for _, reason in HOSTILE}) >= 35


@pytest.mark.parametrize(("key", "reason"), HOSTILE, ids=[repr(k)[:40] for k, _ in HOSTILE])
def test_hostile_key_is_rejected_with_reason(key: str, reason: str) -> None:
    assert key_problem(key) == reason
    with pytest.raises(KeyRejected) as info:
        validate_key(key)
    assert info.value.reason == reason
    assert info.value.key == key


@pytest.mark.parametrize(("char", "name"), INVISIBLE_CHARS, ids=[n for _, n in INVISIBLE_CHARS])
@pytest.mark.parametrize("where", ["a{}b.md", "{}a.md", "notes{}/a.md", "a.md{}", "notes/{}x.md"])
def test_invisible_code_points_are_refused_anywhere(char: str, name: str, where: str) -> None:
    key = where.format(char)
    assert key_problem(key) == INVISIBLE, name
    encoded = where.format("".join(f"%{b:02x}" for b in char.encode("utf-8")))
    assert key_problem(encoded) == URL_CTRL, name


def test_invisible_table_covers_every_default_ignorable_block() -> None:
    """The red team's 26 cases and more: each range of the Unicode set is sampled."""
    assert len(INVISIBLE_CHARS) >= 40
    assert all(key_problem(f"a{chr(c)}b.md") in (INVISIBLE, BIDI) for c in range(0x2060, 0x2070))
    assert all(key_problem(f"a{chr(c)}b.md") == INVISIBLE for c in range(0xFE00, 0xFE10))
    assert all(key_problem(f"a{chr(c)}b.md") == INVISIBLE for c in range(0xE0000, 0xE1000, 7))
    assert all(key_problem(f"a{chr(c)}b.md") == INVISIBLE for c in range(0x200B, 0x200E))
    cf = [c for c in range(0x80, 0x30000) if unicodedata.category(chr(c)) == "Cf"]
    assert len(cf) >= 60
    assert all(key_problem(f"a{chr(c)}b.md") is not None for c in cf)


@pytest.mark.parametrize("space", SPACES)
def test_non_ascii_spaces_are_refused(space: str) -> None:
    assert key_problem(f"a{space}b.md") == "contains a non-ASCII space"
    assert key_problem("a b.md") is None


def test_emoji_joiner_sequences_are_refused_plain_emoji_accepted() -> None:
    # ZWJ and VS16 are invisible: a name built with them can hide a second spelling
    assert key_problem("👨\u200d👩\u200d👧.md") == INVISIBLE
    assert key_problem("\u2764\ufe0f.md") == INVISIBLE
    assert key_problem("party 🎉.md") is None and key_problem("\u2764.md") is None


@pytest.mark.parametrize("key", BENIGN, ids=[repr(k)[:40] for k in BENIGN])
def test_benign_key_is_accepted(key: str) -> None:
    assert key_problem(key) is None
    assert validate_key(key) == key


def test_limits_are_exact() -> None:
    assert len(("/".join(["b" * 254] * 4) + "/cccc").encode()) == MAX_KEY_LENGTH
    assert key_problem("/".join(["b" * 254] * 4) + "/ccccc") == "key longer than 1024 bytes"
    assert key_problem("x" * 252 + ".md") is None
    assert key_problem("x" * 253 + ".md") == SEG_LONG


def test_non_string_is_rejected() -> None:
    assert key_problem(b"a.md") == "not a string"  # type: ignore[arg-type]
    with pytest.raises(KeyRejected):
        validate_key(None)  # type: ignore[arg-type]


def test_fold_key_and_collisions() -> None:
    assert fold_key("Notes/README.md") == "notes/readme.md"
    assert fold_key("Ａ.md") == "a.md"
    assert fold_key("STRASSE.md") == fold_key("straße.md")
    keys = ["A.md", "a.md", "Ａ.md", "b.md", "straße.md", "STRASSE.md", "b.md", "ﬁle.md", "FILE.md"]
    assert find_collisions(keys) == [
        ["A.md", "a.md", "Ａ.md"],
        ["FILE.md", "ﬁle.md"],
        ["STRASSE.md", "straße.md"],
    ]
    assert find_collisions(["a.md", "notes/a.md", "a.md"]) == []


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("RTK-ı.md", "RTK-I.md"),
        ("RTK-ı.md", "rtk-i.md"),
        ("İzmir.md", "izmir.md"),
        ("İzmir.md", "IZMIR.md"),
        ("straße.md", "STRASSE.md"),
        ("ẞ.md", "ss.md"),
        ("ſ.md", "S.md"),
        ("ﬁ.md", "FI.md"),
        ("ﬀ.md", "ff.md"),
        ("ς.md", "Σ.md"),
        ("\u0390.md", "\u0399\u0308\u0301.md"),
        ("\u212a.md", "k.md"),
        ("ǅ.md", "dž.md"),
        ("ᾳ.md", "ΑΙ.md"),
        ("Ꭰ.md", "ꭰ.md"),
        ("Ａ.md", "a.md"),
    ],
)
def test_full_case_folding_special_cases_collide(one: str, other: str) -> None:
    assert fold_key(one) == fold_key(other)
    assert find_collisions([one, other]) == [sorted([one, other])]


def test_prefix_clashes_across_case_and_normalization() -> None:
    assert find_prefix_clashes(["MEMORY.md", "MEMORY.md/x.md"]) == [("MEMORY.md", "MEMORY.md/x.md")]
    assert find_prefix_clashes(["MEMORY.md", "memory.MD/a/b.md"]) == [
        ("MEMORY.md", "memory.MD/a/b.md")
    ]
    assert find_prefix_clashes(["café.md", "CAFÉ.md/x.md", "cafe\u0301.md/y.md"]) == [
        ("café.md", "CAFÉ.md/x.md"),
        ("café.md", "cafe\u0301.md/y.md"),
    ]
    assert find_prefix_clashes(["notes/a.md", "notes/b.md", "notes.md", "a.md"]) == []
    assert find_prefix_clashes(["a.md", "a.md.md", "a.mdx/b.md"]) == []
    clashes = key_clashes(["MEMORY.md", "MEMORY.md/x.md", "ok.md", "A.md", "a.md"])
    assert clashes == {
        "MEMORY.md": "is a file, but 'MEMORY.md/x.md' needs it as a folder",
        "MEMORY.md/x.md": "needs 'MEMORY.md' as a folder, but it is a file",
        "A.md": "collides with 'a.md' after case folding or normalization",
        "a.md": "collides with 'A.md' after case folding or normalization",
    }
    assert keys_problems(["x.md", "X.md/y.md"])["x.md"].startswith("is a file")


def test_keys_problems_rejects_every_member_of_a_collision() -> None:
    problems = keys_problems(["Notes.md", "notes.md", "ok.md", "../x.md"])
    assert problems["../x.md"] == DOTDOT
    assert problems["Notes.md"] == "collides with 'notes.md' after case folding or normalization"
    assert problems["notes.md"] == "collides with 'Notes.md' after case folding or normalization"
    assert "ok.md" not in problems


def test_is_memory_key() -> None:
    assert is_memory_key("a.md") and is_memory_key("notes/MEMORY.md")
    assert not is_memory_key("a.txt") and not is_memory_key(".md") and not is_memory_key("x/.md")
    assert not is_memory_key("a.MD") and not is_memory_key("a.md/")


# -- properties -----------------------------------------------------------------------------

_PIECES = [
    *"ab.%/\\:2efcE5CF0 -_",
    "．",
    "／",
    "＼",
    "\x00",
    "\u202e",
    "é",
    "e\u0301",
    "%2e",
    "%2f",
]
_PIECES += ["%25", "..", "C:", "//", "%c0%ae", "\u2025", "CON", "%u002e", ".md", "Ａ", "%3a", "D"]
tricky_keys = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join)
any_keys = st.one_of(tricky_keys, st.text(max_size=40))


def _inside(key: str) -> bool:
    """Every reading of ``key`` (raw, URL-decoded, NFKC) stays inside a root, POSIX and Windows."""
    forms = {key, unicodedata.normalize("NFKC", key)}
    decoded = key
    for _ in range(4):
        decoded = unquote(decoded)
        forms |= {decoded, unicodedata.normalize("NFKC", decoded)}
    for form in forms:
        posix = posixpath.normpath(posixpath.join("/srv/team", form))
        windows = ntpath.normpath(ntpath.join("C:\\srv\\team", form))
        if not posix.startswith("/srv/team/") or not windows.startswith("C:\\srv\\team\\"):
            return False
    return True


@settings(max_examples=600, deadline=None)
@given(any_keys)
def test_no_accepted_key_resolves_outside_the_root(key: str) -> None:
    if key_problem(key) is None:
        assert _inside(key), key


@settings(max_examples=300, deadline=None)
@given(any_keys)
def test_validation_is_deterministic_and_idempotent(key: str) -> None:
    first = key_problem(key)
    assert key_problem(key) == first
    if first is None:
        assert validate_key(validate_key(key)) == key
        assert unicodedata.is_normalized("NFC", key)
        assert len(key.encode("utf-8")) <= MAX_KEY_LENGTH
        assert all(0 < len(s.encode("utf-8")) <= MAX_SEGMENT_LENGTH for s in key.split("/"))
    else:
        assert isinstance(first, str) and first


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20))
def test_fold_key_is_idempotent_and_case_blind(key: str) -> None:
    folded = fold_key(key)
    assert fold_key(folded) == folded
    assert fold_key(key.upper()) == fold_key(key.lower()) or key.upper().lower() != key.lower()
    variants = {key, key.upper(), unicodedata.normalize("NFKD", key)}
    collisions = find_collisions(variants)
    assert collisions == ([sorted(variants)] if len(variants) > 1 else [])


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["../x.md", "a/../../b.md", "..", "./x.md", "a/b/../../../c.md"]),
    st.lists(st.booleans(), min_size=1, max_size=20),
    st.integers(min_value=1, max_value=3),
)
def test_encoded_traversal_is_always_rejected(key: str, mask: list[bool], depth: int) -> None:
    encoded = key
    for _ in range(depth):
        chars = [
            f"%{ord(c):02x}" if mask[i % len(mask)] and ord(c) < 128 else c
            for i, c in enumerate(encoded)
        ]
        encoded = "".join(chars)
    assert key_problem(encoded) is not None
