#!/usr/bin/python3
"""tools/attnviz-dump without torch (issue 13): write_npz on stand-ins for a
Hugging Face model's outputs.attentions, checked with numpy and zipfile
against the layout attnviz reads; the command line through fake torch and
transformers modules; and the checked-in fixtures of
tests/fixtures/attention against their torch_expected.json. Prints one line
a check and "dump: N passed, M failed"; exits 1 when a check failed.
Run from anywhere with /usr/bin/python3 (Debian's numpy)."""

import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import types
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "attnviz-dump")
FIX = os.path.join(ROOT, "tests", "fixtures", "attention")

passed = 0
failed = 0


def check(cond, desc, detail=""):
    global passed, failed
    if cond:
        print("ok   - " + desc)
        passed += 1
    else:
        print("FAIL - " + desc + (": " + str(detail) if detail != "" else ""))
        failed += 1
    return cond


def guarded(desc, fn):
    """Run fn; an exception is a failed check named desc."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - every exception is a failure
        check(False, desc, "%s: %s" % (type(e).__name__, e))


def load_tool():
    loader = importlib.machinery.SourceFileLoader("attnviz_dump", TOOL)
    spec = importlib.util.spec_from_loader("attnviz_dump", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def softmax_layers(rng, L, H, Tq, Tk, dtype=np.float32):
    """A tuple of L arrays (1, H, Tq, Tk), rows summing to 1: what
    model(..., output_attentions=True).attentions holds, as numpy."""
    out = []
    for _ in range(L):
        s = rng.normal(size=(1, H, Tq, Tk)) * 2
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        out.append((e / e.sum(axis=-1, keepdims=True)).astype(dtype))
    return tuple(out)


class StandInOutput:
    """Stands in for a transformers ModelOutput with attentions."""

    def __init__(self, attentions):
        self.attentions = attentions


def members(path):
    """{member name: compress_type} of the zip."""
    with zipfile.ZipFile(path) as z:
        return {i.filename: i.compress_type for i in z.infolist()}


def check_layout(path, want_att, tokens=None, query_tokens=None, key_tokens=None,
                 compressed=False, what=""):
    """The npz at path has exactly the members of the layout, stored or
    deflated, attention float32 equal to want_att, tokens '<U' 1-D equal to
    the lists, and loads without pickles."""
    m = members(path)
    names = {"attention.npy"}
    if tokens is not None:
        names.add("tokens.npy")
    if query_tokens is not None:
        names |= {"query_tokens.npy", "key_tokens.npy"}
    check(set(m) == names, what + ": members " + ", ".join(sorted(names)), sorted(m))
    ztype = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    check(all(t == ztype for t in m.values()),
          what + ": members " + ("deflated" if compressed else "stored"), m)
    with np.load(path, allow_pickle=False) as z:
        a = z["attention"]
        check(a.dtype == np.dtype("<f4"), what + ": attention is little-endian float32", a.dtype)
        check(a.shape == want_att.shape, what + ": attention shape %s" % (want_att.shape,),
              a.shape)
        check(a.shape == want_att.shape and np.array_equal(a, want_att.astype(np.float32)),
              what + ": attention values as given")
        check(a.flags.c_contiguous and not np.isfortran(a), what + ": C order")
        for key, want in (("tokens", tokens), ("query_tokens", query_tokens),
                          ("key_tokens", key_tokens)):
            if want is None:
                continue
            t = z[key]
            check(t.dtype.kind == "U" and t.dtype.byteorder in "<=" and t.ndim == 1,
                  what + ": %s is a 1-D '<U' array" % key, "%s %s" % (t.dtype, t.shape))
            check(t.tolist() == list(want), what + ": %s as given" % key, t.tolist())


def test_import_and_help():
    for name in ("torch", "transformers"):
        sys.modules.pop(name, None)
    dump = load_tool()
    check("torch" not in sys.modules and "transformers" not in sys.modules,
          "loading the tool imports neither torch nor transformers")
    r = subprocess.run([sys.executable, TOOL, "--help"], capture_output=True, text=True)
    check(r.returncode == 0, "--help exits 0", r.returncode)
    for want in ("run_with_cache", 'cache["pattern", l][0].cpu().numpy()', "model.cfg.n_layers",
                 "--compressed", "--target", "--cross", "query_tokens", "key_tokens",
                 "attn_implementation=\"eager\"", "output_attentions=True", "(L, H, T, T)",
                 "'<U'", "write_npz"):
        check(want in r.stdout, "--help mentions %s" % want)
    # --help with torch and transformers unimportable
    code = ("import sys, runpy; sys.modules['torch'] = None; sys.modules['transformers'] = None; "
            "sys.argv = [%r, '--help']; runpy.run_path(%r, run_name='__main__')" % (TOOL, TOOL))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    check(r.returncode == 0 and "run_with_cache" in r.stdout, "--help works without torch",
          r.stderr[-300:])
    r = subprocess.run([sys.executable, TOOL, "gpt2"], capture_output=True, text=True)
    check(r.returncode == 2, "a missing SENTENCE and -o is a usage error (exit 2)", r.returncode)
    return dump


def test_write(dump, tmp):
    rng = np.random.default_rng(7)
    L, H, T = 3, 4, 6
    tokens = ["[CLS]", "the", "Ġtrain", "▁left", "naïve", "[SEP]"]
    out = StandInOutput(softmax_layers(rng, L, H, T, T))
    want = np.stack([a[0] for a in out.attentions])

    for compressed in (False, True):
        what = "self-attention, " + ("compressed" if compressed else "np.savez")
        path = os.path.join(tmp, "self%d.npz" % compressed)
        guarded(what, lambda: (dump.write_npz(path, out.attentions, tokens, compressed=compressed),
                               check_layout(path, want, tokens=tokens, compressed=compressed,
                                            what=what)))

    # the other shapes attentions may come in, and other float types
    shapes = [
        ("a list of (H, T, T) layers", [a[0] for a in out.attentions]),
        ("a stacked (L, H, T, T) array", want),
        ("a stacked (L, 1, H, T, T) array", want[:, None]),
        ("float64 layers", tuple(a.astype(np.float64) for a in out.attentions)),
        ("float16 layers", tuple(a.astype(np.float16) for a in out.attentions)),
    ]
    for what, att in shapes:
        path = os.path.join(tmp, "shape.npz")
        expect = np.stack([np.asarray(a, dtype=np.float32).reshape(H, T, T) for a in att]) \
            if isinstance(att, (list, tuple)) else want
        guarded(what, lambda: (dump.write_npz(path, att, tokens),
                               check_layout(path, expect, tokens=tokens, what=what)))

    # one layer, one head: still 4-D
    path = os.path.join(tmp, "one.npz")
    one = softmax_layers(rng, 1, 1, 2, 2)
    guarded("one layer of one head", lambda: (
        dump.write_npz(path, one, ["a", "b"]),
        check_layout(path, one[0][None, 0], tokens=["a", "b"], what="one layer of one head")))

    # no tokens at all
    path = os.path.join(tmp, "notok.npz")
    guarded("no tokens", lambda: (dump.write_npz(path, out.attentions, None),
                                  check_layout(path, want, what="no tokens")))

    # the name as given, nothing left behind
    path = os.path.join(tmp, "named.attn")
    guarded("exact name", lambda: dump.write_npz(path, out.attentions, tokens))
    check(os.path.exists(path) and not os.path.exists(path + ".npz"),
          "written under the name given (no .npz added)", os.listdir(tmp))
    check(not [f for f in os.listdir(tmp) if f.endswith(".tmp")], "no temporary file left",
          os.listdir(tmp))

    # an existing file is replaced
    path = os.path.join(tmp, "again.npz")
    with open(path, "wb") as f:
        f.write(b"old contents")
    guarded("overwrite", lambda: (dump.write_npz(path, out.attentions, tokens),
                                  check_layout(path, want, tokens=tokens,
                                               what="an existing file replaced")))


def test_cross(dump, tmp):
    rng = np.random.default_rng(11)
    L, H, Tq, Tk = 2, 3, 4, 5
    q = ["<pad>", "▁Der", "▁Zug", "▁ab"]
    k = ["▁The", "▁train", "▁left", ".", "</s>"]
    att = softmax_layers(rng, L, H, Tq, Tk)
    want = np.stack([a[0] for a in att])
    for compressed in (False, True):
        what = "cross-attention, " + ("compressed" if compressed else "np.savez")
        path = os.path.join(tmp, "cross%d.npz" % compressed)
        guarded(what, lambda: (
            dump.write_npz(path, att, None, query_tokens=q, key_tokens=k, compressed=compressed),
            check_layout(path, want, query_tokens=q, key_tokens=k, compressed=compressed,
                         what=what)))


def expect_value_error(dump, tmp, desc, *args, **kw):
    path = os.path.join(tmp, "bad.npz")
    try:
        dump.write_npz(path, *args, **kw)
        check(False, desc + ": ValueError", "no error")
    except ValueError as e:
        check(not os.path.exists(path), desc + ": ValueError, nothing written (%s)" % e)
    except Exception as e:  # noqa: BLE001
        check(False, desc + ": ValueError", "%s: %s" % (type(e).__name__, e))


def test_errors(dump, tmp):
    rng = np.random.default_rng(3)
    att = softmax_layers(rng, 2, 2, 3, 3)
    sq = ["a", "b", "c"]
    expect_value_error(dump, tmp, "4 tokens for 3", att, sq + ["d"])
    expect_value_error(dump, tmp, "a batch of 2", tuple(np.concatenate([a, a]) for a in att), sq)
    expect_value_error(dump, tmp, "layers of different shapes",
                       (att[0], softmax_layers(rng, 1, 2, 4, 4)[0]), sq)
    expect_value_error(dump, tmp, "no layers", (), sq)
    expect_value_error(dump, tmp, "a 2-D array", att[0][0, 0], sq)
    expect_value_error(dump, tmp, "a (L, 2, H, T, T) array", np.stack([att[0], att[0]], axis=1),
                       sq)
    expect_value_error(dump, tmp, "integer attention", np.ones((1, 1, 3, 3), dtype=np.int32), sq)
    cross = softmax_layers(rng, 1, 2, 2, 3)
    expect_value_error(dump, tmp, "tokens for a 2x3 map", cross, sq)
    expect_value_error(dump, tmp, "query_tokens without key_tokens", cross, None,
                       query_tokens=["x", "y"])
    expect_value_error(dump, tmp, "tokens and query/key tokens", cross, sq,
                       query_tokens=["x", "y"], key_tokens=sq)
    expect_value_error(dump, tmp, "3 query tokens for 2 rows", cross, None,
                       query_tokens=["x", "y", "z"], key_tokens=sq)


# --- the command line with fake torch and transformers ----------------------

class FakeState:
    no_grad = False
    calls = []


def fake_modules(encdec, L=2, H=2):
    """torch (no_grad only) and transformers (AutoModel, AutoTokenizer)
    stand-ins: a whitespace tokenizer and a model returning softmax maps of
    numpy arrays shaped as Hugging Face returns them."""
    torch = types.ModuleType("torch")

    @contextlib.contextmanager
    def no_grad():
        FakeState.no_grad = True
        try:
            yield
        finally:
            FakeState.no_grad = False
    torch.no_grad = no_grad

    vocab = {}

    class Tok:
        @classmethod
        def from_pretrained(cls, name):
            return cls()

        def __call__(self, text=None, text_target=None, return_tensors=None):
            words = (text_target if text_target is not None else text).split()
            ids = [vocab.setdefault(w, len(vocab)) for w in ["<s>"] + words + ["</s>"]]
            return {"input_ids": np.array([ids]), "attention_mask": np.ones((1, len(ids)))}

        def convert_ids_to_tokens(self, ids):
            inv = {v: k for k, v in vocab.items()}
            return [inv[i] for i in ids]

    class Model:
        config = types.SimpleNamespace(is_encoder_decoder=encdec)

        @classmethod
        def from_pretrained(cls, name, **kw):
            FakeState.calls.append(("from_pretrained", kw))
            return cls()

        def eval(self):
            return self

        def __call__(self, input_ids=None, attention_mask=None, decoder_input_ids=None,
                     output_attentions=False):
            FakeState.calls.append(("call", output_attentions, FakeState.no_grad))
            rng = np.random.default_rng(5)
            T = input_ids.shape[1]
            if not output_attentions:  # as Hugging Face: no weights unless asked
                return types.SimpleNamespace(attentions=None, encoder_attentions=None,
                                             cross_attentions=None)
            if not encdec:
                return types.SimpleNamespace(attentions=softmax_layers(rng, L, H, T, T))
            Tq = decoder_input_ids.shape[1]
            return types.SimpleNamespace(
                encoder_attentions=softmax_layers(rng, L, H, T, T),
                decoder_attentions=softmax_layers(rng, L, H, Tq, Tq),
                cross_attentions=softmax_layers(rng, L, H, Tq, T))

    tf = types.ModuleType("transformers")
    tf.AutoModel = Model
    tf.AutoTokenizer = Tok
    return torch, tf


def run_main(dump, encdec, argv):
    """main(argv) with the fakes in sys.modules; returns (status, stderr)."""
    torch, tf = fake_modules(encdec)
    saved = {k: sys.modules.get(k) for k in ("torch", "transformers")}
    sys.modules["torch"], sys.modules["transformers"] = torch, tf
    FakeState.calls = []
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = dump.main(argv)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return rc, err.getvalue()


def test_cli(dump, tmp):
    out = os.path.join(tmp, "cli.npz")
    rc, err = run_main(dump, False, ["gpt2", "the train left", "-o", out])
    check(rc == 0, "CLI, decoder-only model: exit 0", err)
    check(("from_pretrained", {"attn_implementation": "eager"}) in FakeState.calls,
          "CLI: the model is loaded with attn_implementation=\"eager\"", FakeState.calls)
    check(("call", True, True) in FakeState.calls,
          "CLI: run with output_attentions=True under torch.no_grad()", FakeState.calls)
    if rc == 0:
        with np.load(out, allow_pickle=False) as z:
            check(z["attention"].shape == (2, 2, 5, 5) and z["attention"].dtype == np.float32,
                  "CLI: attention (L, H, T, T) float32", z["attention"].shape)
            check(z["tokens"].tolist() == ["<s>", "the", "train", "left", "</s>"],
                  "CLI: tokens from convert_ids_to_tokens", z["tokens"].tolist())
        check(members(out)["attention.npy"] == zipfile.ZIP_STORED, "CLI: stored by default")
    rc, err = run_main(dump, False, ["gpt2", "the train left", "-o", out, "--compressed"])
    check(rc == 0 and members(out)["attention.npy"] == zipfile.ZIP_DEFLATED,
          "CLI: --compressed deflates", err)

    rc, err = run_main(dump, False, ["gpt2", "a b", "-o", out, "--cross", out + "x"])
    check(rc == 1 and "not an encoder-decoder" in err, "CLI: --cross on gpt2 is an error", err)
    rc, err = run_main(dump, False, ["gpt2", "a b", "-o", out, "--target", "x"])
    check(rc == 1 and "not an encoder-decoder" in err, "CLI: --target on gpt2 is an error", err)

    enc, cross = os.path.join(tmp, "enc.npz"), os.path.join(tmp, "cross.npz")
    rc, err = run_main(dump, True, ["t5-small", "the train left", "-o", enc])
    check(rc == 1 and "--target" in err and not os.path.exists(enc),
          "CLI: an encoder-decoder model without --target is an error naming --target", err)
    rc, err = run_main(dump, True, ["t5-small", "the train left", "--target", "der Zug",
                                    "-o", enc, "--cross", cross])
    check(rc == 0, "CLI, encoder-decoder with --target and --cross: exit 0", err)
    if rc == 0:
        with np.load(enc, allow_pickle=False) as z:
            check(set(z.files) == {"attention", "tokens"} and z["attention"].shape == (2, 2, 5, 5)
                  and z["tokens"].tolist() == ["<s>", "the", "train", "left", "</s>"],
                  "CLI: -o gets the encoder's self-attention", z.files)
        with np.load(cross, allow_pickle=False) as z:
            check(set(z.files) == {"attention", "query_tokens", "key_tokens"},
                  "CLI: --cross has attention, query_tokens, key_tokens", z.files)
            check(z["attention"].shape == (2, 2, 4, 5), "CLI: cross attention (L, H, Tq, Tk)",
                  z["attention"].shape)
            check(z["query_tokens"].tolist() == ["<s>", "der", "Zug", "</s>"]
                  and z["key_tokens"].tolist() == ["<s>", "the", "train", "left", "</s>"],
                  "CLI: query_tokens = decoder's, key_tokens = encoder's")


# --- the checked-in fixtures --------------------------------------------------

def rollout(att, through):
    T = att.shape[-1]
    R = np.eye(T)
    for l in range(through + 1):
        a = att[l].astype(np.float64).mean(axis=0)
        a = (a + np.eye(T)) / 2
        a = a / a.sum(axis=1)[:, None]
        R = np.matmul(a, R)
    return R


def test_fixtures():
    names = ["torch_layers.npz", "torch_perlayer.npz", "torch_attention.npy",
             "torch_cross.npz", "torch_expected.json", "make_torch.py"]
    for n in names:
        p = os.path.join(FIX, n)
        check(os.path.exists(p) and os.path.getsize(p) < 10000,
              "fixture %s exists and is under 10 kB" % n)
    e = json.load(open(os.path.join(FIX, "torch_expected.json"), encoding="utf-8"))
    L, H, T = e["L"], e["H"], e["T"]
    with np.load(os.path.join(FIX, "torch_layers.npz"), allow_pickle=False) as z:
        att = z["attention"]
        tokens = z["tokens"]
        check(members(os.path.join(FIX, "torch_layers.npz"))["attention.npy"]
              == zipfile.ZIP_DEFLATED, "torch_layers.npz is np.savez_compressed")
    check(att.shape == (L, H, T, T) and att.dtype == np.float32,
          "torch_layers.npz: attention (L, H, T, T) float32", att.shape)
    check(tokens.dtype.kind == "U" and tokens.tolist() == e["tokens"],
          "torch_layers.npz: tokens '<U' as in the JSON")
    check(np.allclose(att.sum(axis=-1), 1, atol=1e-5) and (att >= 0).all(),
          "torch_layers.npz: rows are distributions")
    with np.load(os.path.join(FIX, "torch_perlayer.npz"), allow_pickle=False) as z:
        check(sorted(z.files) == sorted(["layer_%d" % l for l in range(L)] + ["tokens"]),
              "torch_perlayer.npz: layer_0..layer_%d and tokens" % (L - 1), z.files)
        same = all(z["layer_%d" % l].shape == (1, H, T, T)
                   and np.array_equal(z["layer_%d" % l][0], att[l]) for l in range(L))
        check(same, "torch_perlayer.npz: layer_l (1, H, T, T) = attention[l]")
    npy = np.load(os.path.join(FIX, "torch_attention.npy"), allow_pickle=False)
    check(npy.shape == (L, 1, H, T, T) and np.array_equal(npy[:, 0], att),
          "torch_attention.npy: (L, 1, H, T, T) = attention", npy.shape)
    for m in e["maps"]:
        check(np.array_equal(np.array(m["map"], dtype=np.float32), att[m["layer"], m["head"]])
              and np.array_equal(np.array(m["map"]), att[m["layer"], m["head"]].astype(float)),
              "torch_expected.json: layer %d head %d exactly the file's" % (m["layer"], m["head"]))
    lm = e["layer_mean"]
    check(np.allclose(np.array(lm["map"]), att[lm["layer"]].astype(np.float64).mean(axis=0),
                      rtol=0, atol=1e-15), "torch_expected.json: layer %d's heads' mean"
          % lm["layer"])
    ro = e["rollout"]
    r = rollout(att, ro["layer"])
    check(ro["layer"] == L - 1 and np.allclose(np.array(ro["map"]), r, rtol=0, atol=1e-14),
          "torch_expected.json: rollout through layer %d" % ro["layer"])
    with np.load(os.path.join(FIX, "torch_cross.npz"), allow_pickle=False) as z:
        c = z["attention"]
        check(c.shape == (H, e["Tq"], T) and c.dtype == np.float32,
              "torch_cross.npz: attention (H, Tq, Tk) float32", c.shape)
        check(z["query_tokens"].tolist() == e["query_tokens"]
              and z["key_tokens"].tolist() == e["key_tokens"]
              and z["query_tokens"].dtype.kind == "U" and z["key_tokens"].dtype.kind == "U",
              "torch_cross.npz: query_tokens and key_tokens '<U' as in the JSON")
        for m in e["cross_maps"]:
            check(np.array_equal(np.array(m["map"], dtype=np.float32), c[m["head"]]),
                  "torch_expected.json: cross head %d exactly the file's" % m["head"])


def main():
    with tempfile.TemporaryDirectory(prefix="attnviz-dump.") as tmp:
        dump = None
        try:
            dump = test_import_and_help()
        except Exception as e:  # noqa: BLE001
            check(False, "load tools/attnviz-dump", "%s: %s" % (type(e).__name__, e))
        if dump is not None:
            for fn in (test_write, test_cross, test_errors, test_cli):
                guarded(fn.__name__, lambda: fn(dump, tmp))
        guarded("test_fixtures", test_fixtures)
    print("dump: %d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
