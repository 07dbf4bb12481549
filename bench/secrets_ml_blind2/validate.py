#!/usr/bin/env python3
"""Validate set.jsonl (stdlib only). Prints a counts table and OK, or the failures."""
import json, re, sys, pathlib
HERE = pathlib.Path(__file__).parent
PATH = HERE / (sys.argv[1] if len(sys.argv) > 1 else "set.jsonl")
MIN_S, MIN_N, MIN_LANGS, TOT_S, TOT_N = 25, 22, 14, 350, 310
LONG = re.compile(r"[A-Za-z0-9+/=:_\-]{16,}")

fails, rows, ids, values = [], [], set(), {}
for ln, line in enumerate(PATH.read_text(encoding="utf-8").splitlines(), 1):
    if not line.strip():
        fails.append(f"line {ln}: empty line"); continue
    try:
        o = json.loads(line)
    except Exception as e:
        fails.append(f"line {ln}: JSON error {e}"); continue
    if not isinstance(o, dict):
        fails.append(f"line {ln}: not an object"); continue
    for k in ("id", "lang", "label", "text"):
        if not isinstance(o.get(k), str) or not o.get(k):
            fails.append(f"line {ln}: missing/empty field {k}")
    i, lang, label, text = o.get("id"), o.get("lang"), o.get("label"), o.get("text", "")
    if i in ids: fails.append(f"line {ln}: duplicate id {i}")
    ids.add(i)
    if label not in ("secret", "negative"): fails.append(f"line {ln}: bad label {label!r}")
    if isinstance(i, str) and isinstance(lang, str) and not re.fullmatch(re.escape(lang) + r"-[sn]-\d{3}", i):
        fails.append(f"line {ln}: id {i} does not match lang {lang}")
    if "\n" in text: fails.append(f"line {ln}: text is not a single line")
    if "⟦" in text or "⟧" in text: fails.append(f"line {ln}: unfilled template marker")
    extra = set(o) - {"id", "lang", "label", "text", "value"}
    if extra: fails.append(f"line {ln}: unexpected fields {sorted(extra)}")
    if label == "secret":
        v = o.get("value")
        if not isinstance(v, str) or not v: fails.append(f"line {ln}: secret without value")
        elif v not in text: fails.append(f"line {ln}: value not a substring of text ({i})")
        else:
            if v in values: fails.append(f"line {ln}: value reused (also in {values[v]})")
            values[v] = i
    elif label == "negative" and "value" in o:
        fails.append(f"line {ln}: negative has a value field ({i})")
    rows.append(o)

langs = {}
for o in rows:
    d = langs.setdefault(o.get("lang"), {"secret": 0, "negative": 0, "neg_long": 0})
    if o.get("label") in ("secret", "negative"): d[o["label"]] += 1
    if o.get("label") == "negative" and LONG.search(o.get("text", "")): d["neg_long"] += 1

print(f"{'lang':<8} {'secret':>7} {'negative':>9} {'neg w/ long id':>15}")
for lang, d in langs.items():
    print(f"{lang:<8} {d['secret']:>7} {d['negative']:>9} {d['neg_long']:>15}")
    if d["secret"] < MIN_S: fails.append(f"{lang}: {d['secret']} secrets < {MIN_S}")
    if d["negative"] < MIN_N: fails.append(f"{lang}: {d['negative']} negatives < {MIN_N}")
    if d["neg_long"] * 3 < d["negative"]: fails.append(f"{lang}: fewer than a third of negatives carry a long id/hash")
ts = sum(d["secret"] for d in langs.values()); tn = sum(d["negative"] for d in langs.values())
print(f"{'TOTAL':<8} {ts:>7} {tn:>9} {sum(d['neg_long'] for d in langs.values()):>15}   ({len(langs)} languages)")
if len(langs) < MIN_LANGS: fails.append(f"only {len(langs)} languages < {MIN_LANGS}")
if ts < TOT_S: fails.append(f"total secrets {ts} < {TOT_S}")
if tn < TOT_N: fails.append(f"total negatives {tn} < {TOT_N}")
if fails:
    print("FAIL"); [print(" -", f) for f in fails]; sys.exit(1)
print("OK")
