#!/usr/bin/env python3
"""Validate set.jsonl (stdlib only): schema, unique ids, unique values, value is a substring of text,
counts per language."""
import collections, json, os, sys

EXPECTED_LANGS = ["en", "en-chat", "ko", "ja", "zh-cn", "zh-tw", "tr", "es", "pt-br", "fr", "de", "ru", "vi",
                  "id", "ar", "hi", "pl", "uk", "sv"]
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "set.jsonl")
errors = []
ids, vals, texts = set(), set(), set()
counts = collections.OrderedDict()
with open(path, encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        try:
            rec = json.loads(line)
        except Exception as e:
            errors.append(f"line {n}: bad JSON: {e}")
            continue
        lab = rec.get("label")
        need = {"id", "lang", "label", "text"} | ({"value"} if lab == "secret" else set())
        if set(rec) != need:
            errors.append(f"line {n}: keys {sorted(rec)} != {sorted(need)}")
        if lab not in ("secret", "negative"):
            errors.append(f"line {n}: bad label {lab!r}")
        if rec.get("lang") not in EXPECTED_LANGS:
            errors.append(f"line {n}: unknown lang {rec.get('lang')!r}")
        for k in need:
            if not isinstance(rec.get(k), str) or not rec.get(k):
                errors.append(f"line {n}: {k} must be a non-empty string")
        rid = rec.get("id", "")
        if rid in ids:
            errors.append(f"line {n}: duplicate id {rid}")
        ids.add(rid)
        tag = {"secret": "s", "negative": "n"}.get(lab, "?")
        if not rid.startswith(f"{rec.get('lang')}-{tag}-"):
            errors.append(f"line {n}: id {rid} does not match lang/label")
        t = rec.get("text", "")
        if "\n" in t or "\r" in t:
            errors.append(f"line {n}: text is not a single line")
        if t in texts:
            errors.append(f"line {n}: duplicate text")
        texts.add(t)
        if "⟪" in t or "⟫" in t:
            errors.append(f"line {n}: unrendered template slot")
        if lab == "secret":
            v = rec.get("value", "")
            if v in vals:
                errors.append(f"line {n}: duplicate value")
            vals.add(v)
            if v not in t:
                errors.append(f"line {n}: value is not a substring of text")
        c = counts.setdefault(rec.get("lang"), collections.Counter())
        c[lab] += 1

total = collections.Counter()
print(f"{'lang':8} {'secret':>7} {'negative':>9} {'total':>6}")
for lang in EXPECTED_LANGS:
    c = counts.get(lang, collections.Counter())
    total.update(c)
    print(f"{lang:8} {c['secret']:7d} {c['negative']:9d} {c['secret'] + c['negative']:6d}")
    if c and (c["secret"] != 40 or c["negative"] != 80):
        errors.append(f"{lang}: expected 40 secret / 80 negative, got {c['secret']} / {c['negative']}")
print(f"{'TOTAL':8} {total['secret']:7d} {total['negative']:9d} {total['secret'] + total['negative']:6d}")
missing = [l for l in EXPECTED_LANGS if l not in counts]
print("languages present:", len(counts), "of", len(EXPECTED_LANGS), ("missing: " + ", ".join(missing)) if missing else "")
if errors:
    print(f"FAIL: {len(errors)} error(s)")
    for e in errors[:50]:
        print("  " + e)
    sys.exit(1)
print("OK")
