#!/usr/bin/env python3
"""The last step of `make bench`: turn build/bench/results.txt ("key value"
lines written by run.sh) into the table (printed, and written into README.md
between <!-- bench:begin --> and <!-- bench:end --> only), then the summary
lines "bench: NAME = VALUE".

usage: report.py RESULTS OUTDIR README   (README "": printed only)
"""
import os
import sys

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

# summary name, unit letter, goal (op, value) or None
SUMMARY = [
    ("forward_T8_vs_numpy", "x", (">=", 20)),
    ("forward_T64_vs_numpy", "x", (">=", 20)),
    ("forward_T256_vs_numpy", "x", None),
    ("forward_T1024_vs_numpy", "x", (">=", 1.5)),
    ("forward_T8_vs_torch", "x", (">=", 5)),
    ("forward_T64_vs_torch", "x", (">=", 5)),
    ("forward_T256_vs_torch", "x", (">=", 3)),
    ("forward_T1024_vs_torch", "x", (">=", 3)),
    ("forward_T64_roofline", "", (">=", 0.5)),
    ("forward_T1024_roofline", "", (">=", 0.5)),
    ("teach_steps_per_s_T8", "", (">=", 20000)),
    ("teach_steps_per_s_T64", "", (">=", 2000)),
    ("frame_T8_ms", "", None),
    ("frame_T64_ms", "", ("<=", 4)),
    ("frame_T512_ms", "", ("<=", 12)),
    ("frame_4k_T64_ms", "", ("<=", 16)),
    ("edit_T64_ms", "", None),
    ("edit_T512_ms", "", ("<=", 16)),
    ("export_vs_matplotlib", "x", (">=", 20)),
    ("export_T256_vs_matplotlib", "x", (">=", 20)),
    ("embed_load_MBps", "", (">=", 200)),
    ("peak_rss_T1024_MB", "", ("<=", 100)),
    ("startup_ms", "", ("<=", 150)),
    ("import_open_ms", "", ("<=", 300)),
    ("model_view_frame_ms", "", ("<=", 16)),
    ("model_view_move_ms", "", ("<=", 16)),
    ("import_anon_MB", "", ("<=", 150)),
    ("head_scores_12x12_T256_ms", "", ("<=", 50)),
    ("gpt2_keystroke_T64_ms", "", ("<=", 50)),
    ("gpt2_step_floor_ratio", "", ("<=", 1.3)),
    ("gpt2_forward_T64_vs_torch", "x", (">=", 1.2)),
    ("gpt2_forward_T256_vs_torch", "x", (">=", 1.0)),
    ("gpt2_forward_T256_peak_share", "", (">=", 0.6)),
    ("gpt2_open_ms", "", ("<=", 500)),
    ("gpt2_rss_T1024_MB", "", ("<=", 1000)),
    ("llama_keystroke_T64_ms", "", ("<=", 60)),
    ("llama_forward_T256_vs_torch", "x", (">=", 1.0)),
    ("family_qwen3_0_6b_keystroke_T64_ms", "", ("<=", 150)),
    ("family_gemma3_1b_keystroke_T64_ms", "", ("<=", 250)),
    ("family_pythia_160m_keystroke_T64_ms", "", ("<=", 30)),
    ("family_qwen3_0_6b_forward_T256_vs_torch", "x", (">=", 1.0)),
    ("family_gemma3_1b_forward_T256_vs_torch", "x", (">=", 1.0)),
    ("family_pythia_160m_forward_T256_vs_torch", "x", (">=", 1.0)),
    ("family_qwen3_0_6b_norms_keystroke_ratio", "x", ("<=", 1.2)),
    ("family_gemma3_1b_norms_keystroke_ratio", "x", ("<=", 1.2)),
    ("family_pythia_160m_norms_keystroke_ratio", "x", ("<=", 1.2)),
    ("family_bert_base_fwd128_ms", "", ("<=", 60)),
    ("family_bert_base_forward_T128_vs_torch", "x", (">=", 1.0)),
    ("family_t5_small_encdec32_ms", "", ("<=", 40)),
    ("runtime_gpt2_window_T1024_anon_MiB", "", ("<=", 300)),
    ("runtime_gpt2_window_T1024_hwm_GiB", "", ("<=", 1.2)),
    ("runtime_gpt2_head_scores_T1024_s", "", None),
    ("runtime_llama1b_head_scores_T4096_hwm_GiB", "", ("<=", 2.7)),
    ("runtime_llama1b_window_T4096_anon_GiB", "", ("<=", 2.5)),
    ("runtime_window_H_T4096_ms", "", ("<=", 150)),
    ("runtime_window_L_T4096_ms", "", ("<=", 1500)),
    ("web_toy_key_T7_wasm_vs_native", "x", ("<=", 2)),
    ("web_toy_key_T64_wasm_vs_native", "x", None),
    ("web_frame_page_vs_native", "x", ("<=", 2)),
    ("web_nano_page_ms", "", ("<=", 16)),
    ("web_first_frame_ms", "", ("<=", 2000)),
    ("web_first_frame_st_ms", "", ("<=", 2000)),
]

# the PyTorch peer's settings for the GPT-2 rows (run.sh's PEERS)
PEER_NAMES = {"1": "1 thread", "1b2": "1 thread with OpenBLAS on 2", "2": "2 threads",
              "2spin": "2 threads spinning"}


def load(path):
    res = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                k, _, v = line.partition(" ")
                res[k] = v
    return res


def num(res, key):
    try:
        return float(res[key])
    except (KeyError, ValueError):
        return float("nan")


def fmt(v):
    if v != v:
        return "n/a"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def spread(res, key, form=" (rounds %s–%s)"):
    """ " (rounds a–b)" (or form): the fastest and slowest round of a
    median, when run.sh recorded them."""
    parts = res.get(key, "").split()
    if len(parts) != 2:
        return ""
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        return ""
    return form % (fmt(lo), fmt(hi))


def fmt_result(v):
    """Like fmt, with one more digit below 100 so that a value just under a
    goal never prints as the goal itself (19.98, not 20.0)."""
    if v != v:
        return "n/a"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.2f" % v
    return "%.3f" % v if abs(v) < 1 else "%.2f" % v


def met(v, goal):
    if goal is None:
        return "–"
    op, g = goal
    if v != v:
        return "n/a"
    ok = v >= g if op == ">=" else v <= g
    return "yes" if ok else "**no**"


def goal_text(goal, unit):
    if goal is None:
        return "–"
    op, g = goal
    return "%s %g%s" % ("≥" if op == ">=" else "≤", g, unit)


def table(res):
    g = {name: goal for name, _, goal in SUMMARY}
    # figures of the table without a summary line: "no frame stalls while
    # typing", one frame at 60 Hz
    g["type_T1024_ms"] = ("<=", 16.7)
    g["type-words_T960_ms"] = ("<=", 16.7)
    rows = []

    def row(what, attnviz, ref, key, unit, goal_unit=None):
        v = num(res, key)
        u = "×" if unit == "x" else (" " + unit if unit else "")
        rows.append((what, attnviz, ref, fmt_result(v) + u,
                     goal_text(g[key], goal_unit if goal_unit is not None else u), met(v, g[key])))

    for T in (8, 64, 256, 1024):
        row("attention forward, T = %d" % T,
            "%s µs (%s GFLOP/s)" % (fmt(num(res, "fwd_c_us_%d" % T)), fmt(num(res, "fwd_c_gflops_%d" % T))),
            "numpy %s µs (%s GFLOP/s)" % (fmt(num(res, "fwd_np_us_%d" % T)), fmt(num(res, "fwd_np_gflops_%d" % T))),
            "forward_T%d_vs_numpy" % T, "x")
    for T in (8, 64, 256, 1024):
        row("attention forward vs PyTorch, T = %d" % T,
            "%s µs%s" % (fmt(num(res, "fwd_c_us_%d" % T)), spread(res, "fwd_c_range_%d" % T)),
            "torch MultiheadAttention %s µs%s" % (fmt(num(res, "fwd_torch_us_%d" % T)),
                                                  spread(res, "fwd_torch_range_%d" % T)),
            "forward_T%d_vs_torch" % T, "x")
    for T in (64, 1024):
        row("forward's share of the roofline, T = %d" % T,
            "%s µs" % fmt(num(res, "fwd_c_us_%d" % T)),
            "roofline %s µs (peak %s GFLOP/s, stream %s GB/s)" % (
                fmt(num(res, "roofline_us_%d" % T)), fmt(num(res, "peak_2_gflops")),
                fmt(num(res, "stream_2_GBps"))),
            "forward_T%d_roofline" % T, "")
    row("teach mode, T = 8, d = 16, 1 head (Adam on Wq, Wk)", "steps/s", "–",
        "teach_steps_per_s_T8", "")
    row("teach mode, T = 64, d = 64, 4 heads' mean (Adam on Wq, Wk)", "steps/s", "–",
        "teach_steps_per_s_T64", "")
    for T in (8, 64, 512):
        row("window frame, T = %d" % T,
            "median %s ms, worst %s ms" % (fmt(num(res, "frame_T%d_ms" % T)), fmt(num(res, "frame_worst_T%d_ms" % T))),
            "–", "frame_T%d_ms" % T, "ms")
    row("window frame, 3840 × 2160 at 200 %, T = 64",
        "median %s ms, worst %s ms" % (fmt(num(res, "frame_4k_T64_ms")), fmt(num(res, "frame_4k_worst_T64_ms"))),
        "–", "frame_4k_T64_ms", "ms")
    for T in (64, 512):
        row("weight edit → pixels, T = %d" % T,
            "median %s ms, worst %s ms" % (fmt(num(res, "edit_T%d_ms" % T)), fmt(num(res, "edit_worst_T%d_ms" % T))),
            "–", "edit_T%d_ms" % T, "ms")
    row("keystroke → pixels, typing at the end of a 1024-token sentence",
        "median %s ms, worst %s ms" % (fmt(num(res, "type_T1024_ms")), fmt(num(res, "type_worst_T1024_ms"))),
        "–", "type_T1024_ms", "ms")
    row("keystroke → pixels, typing new words after 960 tokens",
        "median %s ms, worst %s ms" % (fmt(num(res, "type-words_T960_ms")), fmt(num(res, "type-words_worst_T960_ms"))),
        "–", "type-words_T960_ms", "ms")
    row("PNG export, default sentence (T = %s, %s px)" % (res.get("export_default_T", "?"), res.get("export_default_px", "?")),
        "%s ms" % fmt(num(res, "export_attnviz_ms")), "matplotlib %s ms" % fmt(num(res, "export_mpl_ms")),
        "export_vs_matplotlib", "x")
    row("PNG export, T = 256 (%s px)" % res.get("export_t256_px", "?"),
        "%s ms" % fmt(num(res, "export256_attnviz_ms")), "matplotlib %s ms" % fmt(num(res, "export256_mpl_ms")),
        "export_T256_vs_matplotlib", "x")
    row("embedding load, 400,000 × 50 GloVe (%s MB)" % fmt(num(res, "embed_load_MB")),
        "%s s" % fmt(num(res, "embed_load_s")), "–", "embed_load_MBps", "MB/s")
    row("peak RSS, --export T = 1024, d = 64, 4 heads", "–", "–", "peak_rss_T1024_MB", "MB")
    row("start-up to first presented frame (Xvfb)",
        "window visible after %s ms" % fmt(num(res, "startup_visible_ms")), "–", "startup_ms", "ms")

    row("attention file 12 × 12 × 512 × 512 float32 .npy (151 MB): open to the first model-view frame",
        "–", "–", "import_open_ms", "ms")
    row("model-view frame of that file, 1280 × 800",
        "median %s ms, worst %s ms" % (fmt(num(res, "model_view_frame_ms")), fmt(num(res, "model_view_frame_worst_ms"))),
        "–", "model_view_frame_ms", "ms")
    row("model view: moving the selection → pixels",
        "median %s ms, worst %s ms" % (fmt(num(res, "model_view_move_ms")), fmt(num(res, "model_view_move_worst_ms"))),
        "–", "model_view_move_ms", "ms")
    row("anonymous memory (RssAnon) with a %s MB float32 file in the model view" % res.get("import_big_MB", "?"),
        "–", "–", "import_anon_MB", "MB")
    row("head scores, 12 × 12 heads, T = 256",
        "the seven scores of every head (`head_scores_all`, one thread)%s" % spread(res, "head_scores_range"),
        "–", "head_scores_12x12_T256_ms", "ms")
    gpt2_rows(res, row)
    llama_rows(res, row)
    family_rows(res, row)
    bert_rows(res, row)
    t5_rows(res, row)
    runtime_rows(res, row)
    web_rows(res, row)
    head = ("figure", "attnviz", "reference", "result", "goal", "met")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(r) + " |")
    return lines


def gpt2_rows(res, row):
    if "gpt2_fwd64_ms" not in res:
        return
    def peer(key):
        best = res.get("gpt2_torch_%s_peer" % key, "?")
        others = "; ".join("%s: %s ms" % (PEER_NAMES[p], fmt(num(res, "gpt2_torch_%s_ms_%s" % (key, p))))
                           for p in PEER_NAMES)
        return "PyTorch, the same equations, %s: %s ms%s (medians: %s)" % (
            PEER_NAMES.get(best, best), fmt(num(res, "gpt2_torch_%s_ms" % key)),
            spread(res, "gpt2_torch_%s_range" % key), others)

    for T in (64, 256):
        row("GPT-2 small, full forward (every map made, row by row as it goes) vs PyTorch, T = %d" % T,
            "%s ms%s" % (fmt(num(res, "gpt2_fwd%d_ms" % T)), spread(res, "gpt2_fwd%d_range" % T)),
            peer("fwd%d" % T), "gpt2_forward_T%d_vs_torch" % T, "x")
    # a peak that did not double on two cores was measured with the other
    # core busy: a share of it means nothing (gpt2_note says so)
    p1, p2 = num(res, "gpt2_peak_1_gflops"), num(res, "gpt2_peak_2_gflops")
    if not (p1 == p1 and p2 == p2 and p1 > 0 and p2 >= 1.8 * p1):
        res["gpt2_forward_T256_peak_share"] = "nan"
    row("GPT-2 small, the T = 256 forward's share of the two-core float peak",
        "%s ms, %s GFLOP/s" % (fmt(num(res, "gpt2_fwd256_ms")), fmt(num(res, "gpt2_fwd256_gflops"))),
        "peak %s GFLOP/s on 2 cores, %s on 1 (AVX2 and AVX-512 FMA loops, the best of %s runs)" % (
            fmt(num(res, "gpt2_peak_2_gflops")), fmt(num(res, "gpt2_peak_1_gflops")),
            res.get("gpt2_peak_runs", "?")),
        "gpt2_forward_T256_peak_share", "")
    row("GPT-2 small, keystroke at the end of 64 tokens: the incremental forward "
        "(one position, the last row of all 144 maps)",
        "%s ms%s; on the file's mapped weights %s ms" % (
            fmt(num(res, "gpt2_key64_ms")), spread(res, "gpt2_key64_range"),
            fmt(num(res, "gpt2_rss_key64_mapped_ms"))),
        "cached step (past keys and values): " + peer("step64"), "gpt2_keystroke_T64_ms", "ms")
    row("GPT-2 small, that keystroke ÷ the floor of reading every block's weight once "
        "(the median of the rounds' ratios)",
        "%s ms" % fmt(num(res, "gpt2_key64_ms")),
        "floor %s ms: a read-sum over those %s MB of weights (%s GB/s), timed just before and "
        "after the round's keystrokes, best of 1 and 2 threads; ratios%s. Against the stream "
        "mode's best read of a 268 MB buffer of its own, %s GB/s, the ratio is %s" % (
            fmt(num(res, "gpt2_step_floor_ms")), fmt(num(res, "gpt2_block_weight_MB")),
            fmt(num(res, "gpt2_step_read_GBps")),
            spread(res, "gpt2_step_floor_ratio_range", " of the rounds %s–%s"),
            fmt(num(res, "gpt2_read_GBps")), fmt(num(res, "gpt2_step_floor_best_read_ratio"))),
        "gpt2_step_floor_ratio", "")
    conv = num(res, "gpt2_converted")
    ff = num(res, "gpt2_first_frame_ms")
    row("GPT-2 small (random weights, a 548 MB model.safetensors): `attnviz --model DIR TEXT` "
        "launched to its first frame (maps of the text on screen), under Xvfb"
        if ff == ff else "GPT-2 small: open to a one-token forward (the proxy: Xvfb failed)",
        "in it: model_file_open %s ms, one-token forward %s ms; %s" % (
            fmt(num(res, "gpt2_file_proxy_ms")), fmt(num(res, "gpt2_forward1_proxy_ms")),
            "every weight float32, used in place from the mapping (none converted)" if conv == 0
            else "%d tensors converted (%s MB)" % (conv, fmt(num(res, "gpt2_converted_MB")))),
        "–", "gpt2_open_ms", "ms")
    row("GPT-2 small, anonymous memory (RssAnon) after a T = 1024 forward",
        "maps %s MB (made when asked, none kept), key/value cache, queries and residual stream %s MB, scratch %s MB, the rest %s MB; "
        "the weights: the mapped file (RssFile %s MB)" % (
            fmt(num(res, "gpt2_rss_maps_MB")), fmt(num(res, "gpt2_rss_cache_MB")),
            fmt(num(res, "gpt2_rss_scratch_MB")),
            fmt(num(res, "gpt2_rss_T1024_MB") - num(res, "gpt2_rss_maps_MB")
                - num(res, "gpt2_rss_cache_MB") - num(res, "gpt2_rss_scratch_MB")),
            fmt(num(res, "gpt2_rss_file_MB"))),
        "–", "gpt2_rss_T1024_MB", "MB")


def llama_rows(res, row):
    if "llama_fwd256_ms" not in res:
        return
    row("Llama family (SmolLM2-135M's shapes: 30 layers × 9 heads, 3 key-value heads, random "
        "weights), keystroke at the end of 64 tokens (one position, the last row of all 270 maps)",
        "bfloat16 weights used from the mapping (SmolLM2 ships BF16): %s ms%s, with the top 10 "
        "predictions (49152 rows) %s ms; float32 weights (F32/F16 files, converted): %s ms" % (
            fmt(num(res, "llama_bf16_key64_ms")), spread(res, "llama_bf16_key64_range"),
            fmt(num(res, "llama_bf16_key64_top_ms")), fmt(num(res, "llama_key64_ms"))),
        "–", "llama_keystroke_T64_ms", "ms")
    row("Llama family (SmolLM2-135M's shapes), full forward T = 256 (every map made, row by row as it goes) vs PyTorch",
        "float32 weights %s ms%s (bfloat16 from the mapping: %s ms)" % (
            fmt(num(res, "llama_fwd256_ms")), spread(res, "llama_fwd256_range"),
            fmt(num(res, "llama_bf16_fwd256_ms"))),
        "PyTorch float32, the same equations (`tests/bench/torch_llama.py`), %s thread(s): %s ms "
        "(1 thread %s ms, 2 threads %s ms)" % (
            res.get("llama_torch_fwd256_threads", "?"), fmt(num(res, "llama_torch_fwd256_ms")),
            fmt(num(res, "llama_torch_fwd256_ms_1")), fmt(num(res, "llama_torch_fwd256_ms_2"))),
        "llama_forward_T256_vs_torch", "x")


FAMILIES = (("qwen3_0_6b", "Qwen3-0.6B (28 layers × 16 heads, 8 key-value heads, head_dim 128; BF16)"),
            ("gemma3_1b", "Gemma-3-1B (26 layers × 4 heads, 1 key-value head, head_dim 256, "
                          "262144 tokens; BF16)"),
            ("pythia_160m", "Pythia-160M (gpt_neox, 12 layers × 12 heads; F16, converted)"))


def family_rows(res, row):
    for key, name in FAMILIES:
        k = "family_%s_" % key
        if k + "fwd256_ms" not in res:
            continue
        row("%s, random weights: keystroke at the end of 64 tokens with the top 10 predictions" % name,
            "%s ms%s (without the predictions %s ms)" % (
                fmt(num(res, k + "key64_top_ms")), spread(res, k + "key64_top_range"),
                fmt(num(res, k + "key64_ms"))),
            "–", k + "keystroke_T64_ms", "ms")
        row("%s: full forward T = 256 (every map made) vs PyTorch" % name,
            "%s ms%s" % (fmt(num(res, k + "fwd256_ms")), spread(res, k + "fwd256_range")),
            "PyTorch float32, the same equations (`tests/bench/torch_families.py`), %s thread(s): "
            "%s ms (1 thread %s ms, 2 threads %s ms)" % (
                res.get(k + "torch_threads", "?"), fmt(num(res, k + "torch_fwd256_ms")),
                fmt(num(res, k + "torch_fwd256_ms_1")), fmt(num(res, k + "torch_fwd256_ms_2"))),
            k + "forward_T256_vs_torch", "x")
        if k + "key64_norms_ms" in res:
            row("%s: the window's keystroke at T = 64 with the norms shown (value-weighted "
                "attention) vs with the weights" % name,
                "%s ms%s: the forward, each layer's norms maps read as made, the value norms and "
                "the maps' copy" % (fmt(num(res, k + "key64_norms_ms")), spread(res, k + "key64_norms_range")),
                "the same with the weights shown: %s ms%s" % (
                    fmt(num(res, k + "key64_weights_ms")), spread(res, k + "key64_weights_range")),
                k + "norms_keystroke_ratio", "x")


def bert_rows(res, row):
    k = "family_bert_base_"
    if k + "fwd128_ms" not in res:
        return
    row("bert-base (12 layers × 12 heads, F32), random weights: full forward T = 128 (every map "
        "made; an encoder reuses no prefix: every edit is one)",
        "%s ms%s (with the blank's top 10: %s ms)" % (
            fmt(num(res, k + "fwd128_ms")), spread(res, k + "fwd128_range"),
            fmt(num(res, k + "fwd128_top_ms"))),
        "–", k + "fwd128_ms", "ms")
    row("bert-base: full forward T = 128 vs PyTorch",
        "%s ms" % fmt(num(res, k + "fwd128_ms")),
        "PyTorch float32, the same equations (`tests/bench/torch_families.py`), %s thread(s): "
        "%s ms (1 thread %s ms, 2 threads %s ms)" % (
            res.get(k + "torch_threads", "?"), fmt(num(res, k + "torch_fwd128_ms")),
            fmt(num(res, k + "torch_fwd128_ms_1")), fmt(num(res, k + "torch_fwd128_ms_2"))),
        k + "forward_T128_vs_torch", "x")


def t5_rows(res, row):
    k = "family_t5_small_"
    if k + "encdec32_ms" not in res:
        return
    row("t5-small (6 + 6 layers × 8 heads), random weights: a 32-token source and a 32-token target, "
        "the whole forward (encoder, cross keys, every target position)",
        "%s ms%s (the target's last token changed: %s ms)" % (
            fmt(num(res, k + "encdec32_ms")), spread(res, k + "encdec32_range"),
            fmt(num(res, k + "target_key_ms"))),
        "–", k + "encdec32_ms", "ms")


def web_rows(res, row):
    """Section 15 (issue 39): the page in headless Chromium beside native."""
    if "web_frame_page_ms" not in res:
        return
    # the goal is the toy lesson's: its default sentence, 7 words. At 64
    # the softmax's exponentials take 41% of the wasm's time (node
    # --cpu-prof), 4 lanes of wasm SIMD against AVX-512's 16 natively.
    for T in (7, 64):
        k = "web_toy_key_T%d_" % T
        row("the page: the toy keystroke, %d words%s (a sentence set and computed; wasm with SIMD, node's V8)" % (
                T, ", the default sentence's length" if T == 7 else ""),
            "wasm %s µs (the one-thread page's build %s µs)" % (fmt(num(res, k + "wasm_us")), fmt(num(res, k + "wasm_st_us"))),
            "native %s µs" % fmt(num(res, k + "native_us")), k + "wasm_vs_native", "x")
    row("the page: a window frame (the pointer between two cells), 1280 × 800, WebGL on SwiftShader",
        "%s ms%s" % (fmt(num(res, "web_frame_page_ms")), spread(res, "web_frame_range")),
        "native %s ms (software renderer)" % fmt(num(res, "web_frame_native_ms")), "web_frame_page_vs_native", "x")
    row("the page: nano-sort's keystroke, the key to the last frame it caused",
        "%s ms%s (main thread busy %s ms)" % (fmt(num(res, "web_nano_page_ms")), spread(res, "web_nano_range"),
                                               fmt(num(res, "web_nano_busy_ms"))),
        "native %s ms" % fmt(num(res, "web_nano_native_ms")), "web_nano_page_ms", "ms")
    row("the page's first frame on the loopback, threaded page (serve.py), cache off",
        "median of 5 loads%s" % spread(res, "web_first_frame_range", " (%s–%s ms)"), "–", "web_first_frame_ms", "ms")
    row("the page's first frame on the loopback, one-thread page (python3 -m http.server)",
        "median of 5 loads%s" % spread(res, "web_first_frame_st_range", " (%s–%s ms)"), "–", "web_first_frame_st_ms", "ms")


def runs(res, key, unit="", scale=None):
    """ "as is A UNIT, under `prlimit --as=N` B UNIT" from run.sh's KEY_runs
    ("LIMIT=VALUE ...", LIMIT none or the address-space limit; nan: the run
    failed); scale: a factor (numbers formatted), else the values as written."""
    out = []
    for part in res.get(key, "").split():
        limit, _, v = part.partition("=")
        if scale is not None:
            try:
                v = fmt(float(v) * scale)
            except ValueError:
                v = "n/a"
        out.append("%s %s%s" % ("as is" if limit == "none" else "under `prlimit --as=%s`" % limit,
                                v, " " + unit if unit else ""))
    return ", ".join(out) if out else "n/a"


def runtime_rows(res, row):
    if "runtime_window_H_T4096_ms" not in res:
        return
    mib, gib = 1.0, 1 / 1024.0
    row("GPT-2 small (random weights) at T = 1024 in a 1280 × 800 window, the model view (G) "
        "shown: anonymous memory (RssAnon), the worse of the run as is and under an 8 GB limit",
        "%s; the largest RssAnon seen while it computed: %s" % (
            runs(res, "runtime_gpt2_window_RssAnon_MiB_runs", "MiB", mib),
            runs(res, "runtime_gpt2_window_RssAnon_peak_MiB_runs", "MiB", mib)),
        "–", "runtime_gpt2_window_T1024_anon_MiB", "MiB")
    row("that window's peak resident memory (VmHWM, the mapped weights included), the worse of the two runs",
        runs(res, "runtime_gpt2_window_VmHWM_MiB_runs", "GiB", gib),
        "–", "runtime_gpt2_window_T1024_hwm_GiB", "GiB")
    row("GPT-2 small, `attnviz --model DIR --print head-scores TEXT` at T = 1024: the whole "
        "process's wall time (the run as is)",
        "%s; peak resident memory %s" % (
            runs(res, "runtime_gpt2_head_scores_s_runs", "s"),
            runs(res, "runtime_gpt2_head_scores_hwm_MiB_runs", "GiB", gib)),
        "–", "runtime_gpt2_head_scores_T1024_s", "s")
    row("Llama-3.2-1B's attention (16 layers × 32 heads, 8 key-value heads, random weights), "
        "`--print head-scores` at T = 4096 under an 8 GB address-space limit: peak resident "
        "memory (VmHWM); n/a unless all 512 heads' rows are printed",
        "%s; lines printed (513 wanted): %s; wall time %s" % (
            runs(res, "runtime_llama1b_head_scores_hwm_MiB_runs", "GiB", gib),
            runs(res, "runtime_llama1b_head_scores_lines_runs"),
            runs(res, "runtime_llama1b_head_scores_s_runs", "s")),
        "–", "runtime_llama1b_head_scores_T4096_hwm_GiB", "GiB")
    row("that model at T = 4096 in the window under that limit, the model view (G) shown: "
        "anonymous memory (RssAnon)",
        "%s; the largest RssAnon seen while it computed: %s; VmHWM %s" % (
            runs(res, "runtime_llama1b_window_RssAnon_MiB_runs", "GiB", gib),
            runs(res, "runtime_llama1b_window_RssAnon_peak_MiB_runs", "GiB", gib),
            runs(res, "runtime_llama1b_window_VmHWM_MiB_runs", "GiB", gib)),
        "–", "runtime_llama1b_window_T4096_anon_GiB", "GiB")
    what = ("%s renderer, SDL video driver %s" % (res.get("runtime_window_renderer", "?"),
                                                  res.get("runtime_window_video", "?")))
    for k, name in (("H", "H (the next head)"), ("L", "L (the next layer)")):
        row("that model at T = 4096, the window: %s, the key event to the last frame it caused" % name,
            "median of %s presses, %s (other processes: %s cores during the presses)" % (
                res.get("runtime_window_presses", "?"), what, res.get("runtime_window_other_load", "?")),
            "–", "runtime_window_%s_T4096_ms" % k, "ms")


def runtime_note(res):
    """How the runtime rows (issue 33) were measured, and how busy the
    machine was meanwhile."""
    if "runtime_window_H_T4096_ms" not in res:
        return []
    text = ("Runtime rows (issue 33): random-weight folders from `tests/bench/mem/make_models.py` "
            "(float32 safetensors, a byte-level tokenizer of 261 tokens): GPT-2 small's shapes (12 "
            "layers × 12 heads, n_embd 768, n_positions 1024; 261 × 768 token embeddings) and "
            "Llama-3.2-1B's attention (16 layers × 32 query heads, 8 key-value heads, head_dim 64, "
            "rope_theta 500000, llama3 rope scaling; hidden 256 and intermediate 512, small: only "
            "the attention's shape sets the maps' memory). The texts: sentences/long.txt's "
            "paragraphs cut to exactly T tokens (`--print tokens`). `tests/bench/mem/measure.sh` "
            "runs `attnviz --model DIR --print head-scores TEXT` and the window `attnviz --model "
            "DIR TEXT` in a private 1280 × 800 Xvfb, GPT-2 once as is and once under `prlimit "
            "--as=8000000000` (an 8 GB address space), the Llama-shaped model (a forward of a "
            "minute or more) under that limit only; it polls /proc/PID/status (RssAnon and "
            "VmHWM, every 50 ms on the command line, every 0.25 s in the window: lower bounds of "
            "the peaks; the command line's peak is also /usr/bin/time's maximum RSS, the larger "
            "taken). The window's figures are read once it is idle (no CPU for 2 s) after `g` "
            "(xdotool) switched it to the model view; RssAnon then, the largest seen while it "
            "computed beside it. H and L: `tests/bench/window_bench` on the Llama-shaped folder "
            "and the T = 4096 text, in process on the real app (`app_handle_event`, `app_tick`, "
            "`app_draw`), from the key event to the last frame it caused, a 1280 × 800 %s "
            "renderer on SDL's %s driver, as the tests draw (an X11 window on Xvfb, "
            "`WINDOW_BENCH_X11=1`, was slower when tried for commit bca9647: 147 and 141 ms against "
            "122 and 120; not run here), medians of %s presses each; "
            "the command line's forward of the text took %s ms there. The section took %s s "
            "(load average %s at its start, %s at its end)."
            % (res.get("runtime_window_renderer", "?"), res.get("runtime_window_video", "?"),
               res.get("runtime_window_presses", "?"), fmt(num(res, "runtime_window_open_ms")),
               fmt(num(res, "runtime_wall_s")), res.get("runtime_load_start", "?"),
               res.get("runtime_load_end", "?")))
    out = ["", text]
    try:
        cores = int(res.get("cores", "1"))
    except ValueError:
        return out
    other = num(res, "runtime_other_cores")
    if other == other and other >= 0.25:
        out += ["", "**Note:** the machine was busy during the runtime rows (other processes used %s of "
                "its %d cores on average): the times are higher; the memory figures are not affected."
                % (fmt(other), cores)]
    elif other == other:
        out += ["", "The machine was otherwise idle during the runtime rows: other processes used %s "
                "of its %d cores on average (CPU time from /proc/stat less the bench's own)."
                % (fmt(other), cores)]
    return out


def llama_note(res):
    """How the Llama rows were measured."""
    if "llama_fwd256_ms" not in res:
        return []
    return ["", "Llama rows (issue 27): SmolLM2-135M's shapes (30 layers × 9 heads, 3 key-value heads, "
            "head_dim 64, hidden 576, intermediate 1536, 49152 × 576 tied embeddings), random weights, "
            "attnviz's kernels: %s. `tests/bench/llama_bench` (`forward`: float32 [in, out] weights, as "
            "an F32 or F16 file is converted; `forward-bf16`: bfloat16 [out, in] as a BF16 file's "
            "mapping holds them): a full forward is `rt_reset` + `rt_forward` + `rt_maps_copy` on a state that "
            "held as many tokens, the keystroke replaces the last of 64 tokens (two ids alternating); "
            "medians of 5 (keystroke 15) a round. PyTorch (`tests/bench/torch_llama.py`): modeling_llama's "
            "equations in torch, float32, under `inference_mode`, every layer's maps returned, on 1 and "
            "on 2 threads, the better median taken; the same equations as the float64 reference of "
            "`tests/fixtures/llama/make_llama_fixtures.py` that test_llama_io checks attnviz against "
            "(load average %s at the start of these rows, %s at the end)."
            % (res.get("llama_kernels", "?"), res.get("llama_load_start", "?"),
               res.get("llama_load_end", "?"))]


def gpt2_note(res):
    """How the GPT-2 rows were measured, and whether the machine was busy
    while they were (a busy core lowers the peak and so raises the share)."""
    if "gpt2_fwd64_ms" not in res:
        return []
    text = ("GPT-2 rows (issue 25): GPT-2 small's shapes (12 layers × 12 heads, C 768, n_inner 3072, "
            "50257 × 1024 embeddings), random weights (std 0.02), float32, attnviz's kernels: %s. "
            "attnviz (`tests/bench/gpt2_bench`): a full forward is `rt_reset` + `rt_forward` + `rt_maps_copy` "
            "on a state that held as many tokens (no allocation timed), the keystroke replaces the last "
            "of 64 tokens (two ids alternating); medians of 5 (keystroke 15) a round. PyTorch %s "
            "(`tests/bench/torch_gpt2.py`): modeling_gpt2's equations written out in torch under "
            "`inference_mode` (transformers is not installed), every layer's maps returned, the cached "
            "step concatenating past keys and values as Hugging Face does; medians of 3 a round, "
            "each figure from its best setting (`torch.set_num_threads(1)` with OpenBLAS on 1 thread or "
            "on 2; torch and OpenBLAS on 2; the same spinning, `OMP_WAIT_POLICY=ACTIVE`); on the "
            "generated file its maps equal attnviz's within %s. "
            "FLOPs of a forward: 2·T·L·12·C² (the matmuls) + 2·L·C·T(T+1) (Q·Kᵀ and weights·V over "
            "the causal triangle). Open: the window launched on a generated GPT-2 small folder "
            "under Xvfb to its first frame (page cache warm; `gpt2_bench open` times its parts). "
            "The step's floor: a read-sum over the 12 blocks' weights themselves, in the "
            "keystrokes' process just before and after them (where the bytes lie sets the "
            "bandwidth on this host: the stream mode's own buffer read at 28 GB/s in one process "
            "and 50 in another)."
            % (res.get("gpt2_kernels", "?"), res.get("gpt2_torch_version", "?"),
               "%.1g" % num(res, "gpt2_peer_max_diff")))
    out = ["", text]
    try:
        cores = int(res.get("cores", "1"))
    except ValueError:
        return out
    other = num(res, "gpt2_other_cores")
    p1, p2 = num(res, "gpt2_peak_1_gflops"), num(res, "gpt2_peak_2_gflops")
    scaled = p1 == p1 and p2 == p2 and p1 > 0 and p2 >= 1.8 * p1
    if (other == other and other >= 0.25) or not scaled:
        out += ["", "**Note:** the machine was busy during the GPT-2 rows (other processes used %s of "
                "its %d cores on average; the two-core peak %s× the one-core one%s): their times are "
                "higher, the peak share is %s, and the floor's read-sum and the keystrokes may have "
                "met different loads." % (
                    fmt(other), cores, fmt(p2 / p1) if p1 == p1 and p1 > 0 else "n/a",
                    "" if scaled else ", not 2×: the other core was busy while it was measured",
                    "not given (the peak measured low)" if not scaled else "understated")]
    elif other == other:
        out += ["", "The machine was otherwise idle during the GPT-2 rows: other processes used %s "
                "of its %d cores on average (CPU time from /proc/stat less the bench's own)."
                % (fmt(other), cores)]
    return out


def machine(res):
    return [
        "Measured by `make bench` on %s: %s, %s cores (load average %s at the start, %s at the end); "
        "%s; %s; %s; numpy BLAS: %s; attnviz's kernels: %s."
        % (res.get("date", "?"), res.get("cpu", "?"), res.get("cores", "?"), res.get("load_start", "?"),
           res.get("load_end", "?"), res.get("compiler", "?"), res.get("sdl", "?"), res.get("python", "?"),
           res.get("blas", "?"), res.get("kernels", "?")),
        "",
        "Medians of repeated runs; each ratio compares two medians of one run with the two "
        "sides alternated (%s rounds). Forward: learned mode, d = 64, 4 heads, no mask, "
        "float32, attn_forward as built and as a Model runs it (every head's scores and weights kept; logits and the "
        "heads' mean are made when shown; it may use both cores, as OpenBLAS does), numpy computing the same, "
        "timed inside Python; "
        "PyTorch: `MultiheadAttention(64, 4, bias=False)` in eval mode under `no_grad`, every head's weights kept, "
        "2 threads spinning between parallel regions (`OMP_WAIT_POLICY=ACTIVE`), timed inside Python. Frames: `view_layout` + "
        "`view_draw_window` + present on a 1280×800 software renderer (5 runs × 50 frames); a keystroke "
        "is one text or Backspace event through `app_handle_event` (retokenize, embed, recompute) and that frame. "
        "Exports: whole processes (interpreter start included). MB = 10⁶ bytes."
        % res.get("rounds", "?"),
    ]


def peak_note(res):
    """What the forward goals at T <= 64 ask of the machine, against its
    measured float peak: the goal cannot be met when it needs more."""
    p1, p2 = num(res, "peak_1_gflops"), num(res, "peak_2_gflops")
    if p1 != p1 or p1 <= 0 or p2 != p2 or p2 <= 0:
        return []
    need = {}
    for T in (8, 64):
        np_us = num(res, "fwd_np_us_%d" % T)
        if np_us == np_us and np_us > 0:
            flops = 8.0 * T * 64 * 64 + 4.0 * T * T * 64
            need[T] = (np_us / 20.0, flops / (np_us / 20.0 * 1e3))
    if 8 not in need or 64 not in need:
        return []
    (us8, g8), (us64, g64) = need[8], need[64]
    text = ("The float peak of this machine, measured in the same run (`gpt2_bench peak`, loops "
            "of independent 8- and 16-lane FMAs, the best instruction set's): %s GFLOP/s on one core, %s GFLOP/s on both. 20× numpy would take %s µs per forward "
            "at T = 8, %s GFLOP/s (%s× one core's peak%s), and %s µs at T = 64, %s GFLOP/s (%s× the peak "
            "of both cores)."
            % (fmt(p1), fmt(p2), fmt(us8), fmt(g8), fmt(g8 / p1),
               ", more than both cores' even if so short a forward could be split between them for free"
               if g8 > p2 else "; both cores could in principle, if a 1 µs forward could be split between them",
               fmt(us64), fmt(g64), fmt(g64 / p2)))
    if g8 > p2 and g64 > p2:
        text += " No implementation can meet the ≥ 20× goals at T ≤ 64 on this machine."
    return ["", text]


def busy_note(res):
    """A warning line when other work was running: the figures are then low."""
    try:
        load = max(float(res.get("load_start", "0")), float(res.get("load_end", "0")))
        cores = int(res.get("cores", "1"))
    except ValueError:
        return []
    other = num(res, "other_cores")
    if other == other:  # other processes' CPU time: the load average counts the bench's own
        if other < 0.25:
            return []
        return ["", "**Note:** the machine was busy during this run (other processes used %s of its %d "
                "cores on average); the times are higher and the ratios noisier than on an idle "
                "machine." % (fmt(other), cores)]
    if load < 0.5 * cores:
        return []
    return ["", "**Note:** the machine was busy during this run (load average %.1f on %d cores); "
            "the times are higher and the ratios noisier than on an idle machine." % (load, cores)]


def update_readme(path, block):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        print("make bench: warning: %s not found; the table was not written into it" % path, file=sys.stderr)
        return
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < 0 or e < b:
        print("make bench: warning: %s has no %s ... %s section; left unchanged" % (path, BEGIN, END),
              file=sys.stderr)
        return
    # keep the marker lines, replace what is between them
    b_end = text.index("\n", b) + 1 if "\n" in text[b:e] else b + len(BEGIN)
    new = text[:b_end] + ("\n" if b_end == b + len(BEGIN) else "") + "\n".join(block) + "\n" + text[e:]
    if new != text:
        tmp = path + ".bench-tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(tmp, path)
    print("make bench: table written into %s" % path, file=sys.stderr)


def main():
    res = load(sys.argv[1])
    outdir, readme = sys.argv[2], sys.argv[3]
    lines = table(res)
    info = machine(res) + peak_note(res) + busy_note(res) + gpt2_note(res) + llama_note(res) + runtime_note(res)
    print()
    print("\n".join(info))
    print()
    print("\n".join(lines))
    for name in ("forward_profile.log", "frame_parts.log"):
        p = os.path.join(outdir, name)
        if os.path.exists(p):
            print()
            print("where the time goes (%s):" % name)
            with open(p, encoding="utf-8") as f:
                print(f.read().rstrip())
    print()
    if readme:
        update_readme(readme, info + [""] + lines)
    for name, unit, _ in SUMMARY:
        if not readme and name not in res:  # a part of the bench not run (BENCH_ONLY)
            continue
        v = num(res, name)
        print("bench: %s = %s%s" % (name, ("%.1f" % v if abs(v) >= 100 else "%.2f" % v) if v == v else "n/a", unit))


if __name__ == "__main__":
    main()
