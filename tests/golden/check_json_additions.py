#!/usr/bin/python3
"""Issue 14 changed the --print json of every existing golden case by two
additions only: config.score ("dot", these cases use no other) and each
head's "v" (learned: dk numbers of params.v; basic: d numbers of vb). Given
the folder of the files before and the folder after, this checks that
removing exactly those from each new file gives the old one, value for
value (parsed JSON, so key order and white space do not matter). Run once
when the goldens were rewritten: check_json_additions.py OLD_DIR NEW_DIR."""
import json
import math
import os
import sys

old_dir, new_dir = sys.argv[1], sys.argv[2]
bad = 0
for name in sorted(os.listdir(old_dir)):
    if not name.endswith(".json"):
        continue
    old = json.load(open(os.path.join(old_dir, name)))
    new = json.load(open(os.path.join(new_dir, name)))
    cfg = new["config"]
    ok = cfg.pop("score", None) == "dot"
    d, learned = cfg["d_model"], cfg["mode"] == "learned"
    n = cfg["d_k"] if learned else d
    for h in new["heads"]:
        v = h.pop("v", None)
        # the defaults: 1/sqrt(dk) per entry (or 1/sqrt(d) for vb) unless a
        # seed drew them; only the length is the format's promise here
        ok = ok and isinstance(v, list) and len(v) == n and all(math.isfinite(x) for x in v)
        if learned and cfg["seed"] is None:
            ok = ok and all(abs(x - 1 / math.sqrt(n)) < 1e-7 for x in v)
    same = ok and new == old
    print(("ok   - " if same else "FAIL - ") + name + ": only config.score and heads[].v added")
    bad += not same
print("json additions: %d failed" % bad)
sys.exit(1 if bad else 0)
