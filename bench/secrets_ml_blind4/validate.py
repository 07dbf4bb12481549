"""Validate set.jsonl (stdlib only)."""
import json, sys, collections, os
P = os.path.join(os.path.dirname(os.path.abspath(__file__)), "set.jsonl")
LANGS = ["en","en-chat","ko","ja","zh-cn","zh-tw","tr","es","pt-br","fr","de","ru","vi","id","ar","hi","pl","uk","sv"]
errs = []; ids = set(); vals = set(); texts = set(); cnt = collections.defaultdict(collections.Counter)
for i, line in enumerate(open(P, encoding="utf-8"), 1):
    try: r = json.loads(line)
    except Exception as e: errs.append("line %d: bad json %s" % (i, e)); continue
    keys = set(r)
    lab = r.get("label")
    need = {"id","lang","label","text"} | ({"value"} if lab == "secret" else set())
    if keys != need: errs.append("line %d: keys %s" % (i, sorted(keys)))
    if lab not in ("secret","negative"): errs.append("line %d: label %r" % (i, lab))
    if r.get("lang") not in LANGS: errs.append("line %d: lang %r" % (i, r.get("lang")))
    if not isinstance(r.get("text"), str) or not r.get("text") or "\n" in r["text"]: errs.append("line %d: text" % i)
    if r.get("id") in ids: errs.append("line %d: dup id %s" % (i, r.get("id")))
    ids.add(r.get("id"))
    exp = "%s-%s-" % (r.get("lang"), "s" if lab == "secret" else "n")
    if not str(r.get("id")).startswith(exp): errs.append("line %d: id prefix %s" % (i, r.get("id")))
    if r.get("text") in texts: errs.append("line %d: dup text" % i)
    texts.add(r.get("text"))
    if lab == "secret":
        v = r.get("value")
        if not v or v not in r["text"]: errs.append("line %d: value not in text" % i)
        if v in vals: errs.append("line %d: dup value" % i)
        vals.add(v)
    cnt[r.get("lang")][lab] += 1
out = ["lang\tsecret\tnegative"]
for l in LANGS:
    out.append("%s\t%d\t%d" % (l, cnt[l]["secret"], cnt[l]["negative"]))
    if (cnt[l]["secret"], cnt[l]["negative"]) != (30, 80): errs.append("%s: counts %d/%d (want 30/80)" % (l, cnt[l]["secret"], cnt[l]["negative"]))
out.append("total\t%d\t%d" % (sum(c["secret"] for c in cnt.values()), sum(c["negative"] for c in cnt.values())))
print("\n".join(out))
print("errors: %d" % len(errs))
for e in errs[:50]: print("  " + e)
sys.exit(1 if errs else 0)
