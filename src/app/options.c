/* The command line: getopt_long into an Options struct, every number checked
 * whole (no trailing junk), every value range-checked. No SDL. */
#define _GNU_SOURCE
#include "attnviz/options.h"
#include "attnviz/head_scores.h"
#include "attnviz/probe.h"
#include "attnviz/teach_io.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

const char options_usage[] =
    "usage: attnviz [OPTIONS] [SENTENCE...]\n"
    "       attnviz SESSION.json\n"
    "Shows self-attention of a sentence in a window, or prints/exports it.\n"
    "\n"
    "Input:\n"
    "  -s, --sentence TEXT      the sentence (or give it as words at the end)\n"
    "  -f, --sentence-file FILE a sentences file (first sentence, or --line N)\n"
    "      --line N             use sentence N (1-based) of the file; a line\n"
    "                           'query ||| keys' gives both sentences\n"
    "      --keys TEXT          a second sentence: keys and values (cross-attention;\n"
    "                           queries from the first); overrides a file's pair\n"
    "  -e, --embeddings FILE    GloVe or word2vec text file (default: built-in table)\n"
    "  -w, --weights FILE       Wq/Wk/Wv/Wo from a --print json or session file\n"
    "      --session FILE       open a saved session\n"
    "      --attention FILE     a real model's attention: .npy .npz .safetensors .json\n"
    "                           (or give the file alone); tokens from the file or:\n"
    "      --tokens FILE        tokens, one a line (queries of a cross-attention file)\n"
    "      --key-tokens FILE    the key tokens of a cross-attention file\n"
    "      --layer I|avg        layer of an attention file (1-based; default 1)\n"
    "      --rollout            attention rollout through the layer (heads averaged)\n"
    "      --drop TOKENS        drop these tokens (comma-separated), renormalise rows\n"
    "      --model DIR|FILE|NAME  a language model computed here: a Hugging Face folder,\n"
    "                           a GGUF file (llama.cpp's), or a name in the Hugging\n"
    "                           Face cache (gpt2, Qwen/Qwen2.5-0.5B), Ollama's store\n"
    "                           (llama3.2:1b) or LM Studio's (PUBLISHER/REPO); the\n"
    "                           text: the sentence\n"
    "      --prepend-bos        the model's first token: its bos token\n"
    "      --generate N         continue the text by N tokens (greedy: the most\n"
    "                           likely each time), print the continuation; with\n"
    "                           --print or --export: the text with it\n"
    "      --sample             generate by sampling: softmax(logits / tau) of the\n"
    "                           --top-k K most likely (default 0: all), tau from\n"
    "                           --temperature (default 1), the draws from --seed\n"
    "                           (default 0): the same tokens on every machine;\n"
    "                           with --model in the window: how Ctrl+G picks\n"
    "      --top-k K            sample from the K most likely tokens (0: all)\n"
    "      --ablate L.H[,L.H...]  switch heads off (1-based layer.head): their\n"
    "                           output, before the output projection, zeroed for\n"
    "                           the predictions, later layers' maps, the logit\n"
    "                           lens, generation, the exports and the window\n"
    "                           (where Ctrl+K switches the shown head)\n"
    "      --ablate-mean        replace the ablated heads' outputs by their mean\n"
    "                           over the text's positions instead of zeros\n"
    "      --probe induction[:N]  run the model on its bos token, N random tokens\n"
    "                           (default 25; from --seed) and the same N again, not\n"
    "                           on a text: induction heads show in --print head-scores\n"
    "                           (--print tokens prints the probe's tokens)\n"
    "Attention:\n"
    "  -m, --mode basic|learned basic: Q = K = V = X; learned (default): X·Wq ...\n"
    "  -H, --heads N            number of heads (must divide d; default 1)\n"
    "      --seed N             a sentence: Xavier-uniform random weights from seed N;\n"
    "                           a model with --probe: the probe's random tokens;\n"
    "                           with --sample: the draws\n"
    "      --score dot|cosine|additive  q.k (default), cos(q, k), or v.tanh(q + k)\n"
    "      --causal             mask keys after the query (self-attention only)\n"
    "      --no-scale           do not divide scores by sqrt(dk) (dot only)\n"
    "      --posenc             add sinusoidal positional encoding\n"
    "  -t, --temperature X      softmax temperature tau > 0 (default 1); a model\n"
    "                           with --sample: the sampling temperature\n"
    "Teach (gradient descent learns Wq and Wk to give a target pattern):\n"
    "      --teach TARGET       a CSV file (the --print csv format) or a preset:\n"
    "                           self, previous, next, first (for --head I|avg)\n"
    "      --steps N            steps (default 200; 0: the loss before any)\n"
    "      --lr X               learning rate (default 0.1)\n"
    "      --optimizer sgd|adam as PyTorch's (default adam)\n"
    "      --train LIST         what learns: wq,wk (default), x (word vectors), v\n"
    "Output (no window):\n"
    "      --print text|csv|json  print the computation and exit\n"
    "      --print tokens|predictions  a model's tokens, or its 10 most likely next\n"
    "                           tokens after the last position (or --query I)\n"
    "      --print logit-lens   a model's logit lens at the last position (or --query\n"
    "                           I): each layer's residual stream (0: the embeddings)\n"
    "                           through the final norm and output layer, its 5 most\n"
    "                           likely tokens as CSV: layer,rank,id,token,prob\n"
    "      --print head-scores  every layer and head's scores of an attention file or\n"
    "                           a model as CSV: previous, self, first, duplicate,\n"
    "                           induction, entropy, distance (blank: none)\n"
    "      --head I|avg         head (1-based) for text/csv and PNG (default 1)\n"
    "      --export FILE        write .png .svg .csv or .json (repeatable)\n"
    "      --export-attention F a model's every layer and head: .npy .npz .safetensors\n"
    "      --target TEXT        an encoder-decoder's (T5, BART) target: the decoder's\n"
    "                           text (the sentence is the source)\n"
    "      --group encoder|decoder|cross  an encoder-decoder's maps for --print and\n"
    "                           --export (default cross: target x source) and the\n"
    "                           window (default: cross once there is a target, the\n"
    "                           encoder's before)\n"
    "      --all-lines          with -f: one export per sentence (numbered)\n"
    "      --view heatmap|lines|both|grid|heads  PNG content (default heatmap; grid:\n"
    "                           every layer and head of an attention file or model;\n"
    "                           heads: an L x H heatmap of one head score, PNG or SVG)\n"
    "      --head-score NAME    the score of --view heads: previous, self, first,\n"
    "                           duplicate, induction (default), entropy (cross-\n"
    "                           attention's default) or distance\n"
    "      --matrix weights|scores|logits|norms  the map of PNG, SVG, --print csv|text\n"
    "                           and the window (default weights; norms: value-\n"
    "                           weighted, alpha[i,j] * |v_j W_O,h|)\n"
    "      --scale N            PNG scale factor 1-8 (default 2)\n"
    "      --query I            selected query row (1-based)\n"
    "      --colormap NAME      viridis, cividis, magma or greys\n"
    "      --color-scale fixed|max|row  weights' colours: 0 to the map's max\n"
    "                           (default: the strongest links stand out), fixed 0-1\n"
    "                           (one colour = one weight on every slide), or each\n"
    "                           row 0 to its own max (long sentences)\n"
    "      --theme light|dark   exports (default light) and the window (default dark)\n"
    "Window:\n"
    "      --export-dir DIR     where Ctrl+E writes (default: current folder)\n"
    "      --font FILE          TrueType font (default: DejaVu Sans via fontconfig)\n"
    "      --fresh              do not restore the autosave\n"
    "  -h, --help               this help\n"
    "  -V, --version            version\n";

enum {
    O_LINE = 256, O_SEED, O_CAUSAL, O_NOSCALE, O_POSENC, O_HEAD, O_PRINT,
    O_EXPORT, O_EXPORTDIR, O_VIEW, O_SCALE, O_QUERY, O_CMAP, O_THEME,
    O_ALLLINES, O_SESSION, O_FRESH, O_FONT, O_MATRIX, O_ATTN, O_TOKENS, O_KTOKENS,
    O_LAYER, O_ROLLOUT, O_DROP, O_KEYS, O_SCORE, O_TEACH, O_STEPS, O_LR, O_OPTIMIZER,
    O_TRAIN, O_CSCALE, O_MODEL, O_BOS, O_EXPATTN, O_HSCORE, O_PROBE,
    O_GENERATE, O_SAMPLE, O_TOPK, O_ABLATE, O_ABLMEAN, O_TARGET, O_GROUP
};

static const struct option longopts[] = {
    {"sentence", required_argument, 0, 's'},
    {"sentence-file", required_argument, 0, 'f'},
    {"line", required_argument, 0, O_LINE},
    {"embeddings", required_argument, 0, 'e'},
    {"weights", required_argument, 0, 'w'},
    {"mode", required_argument, 0, 'm'},
    {"heads", required_argument, 0, 'H'},
    {"seed", required_argument, 0, O_SEED},
    {"probe", required_argument, 0, O_PROBE},
    {"causal", no_argument, 0, O_CAUSAL},
    {"no-scale", no_argument, 0, O_NOSCALE},
    {"posenc", no_argument, 0, O_POSENC},
    {"temperature", required_argument, 0, 't'},
    {"head", required_argument, 0, O_HEAD},
    {"print", required_argument, 0, O_PRINT},
    {"export", required_argument, 0, O_EXPORT},
    {"export-dir", required_argument, 0, O_EXPORTDIR},
    {"view", required_argument, 0, O_VIEW},
    {"matrix", required_argument, 0, O_MATRIX},
    {"scale", required_argument, 0, O_SCALE},
    {"query", required_argument, 0, O_QUERY},
    {"colormap", required_argument, 0, O_CMAP},
    {"color-scale", required_argument, 0, O_CSCALE},
    {"theme", required_argument, 0, O_THEME},
    {"all-lines", no_argument, 0, O_ALLLINES},
    {"session", required_argument, 0, O_SESSION},
    {"fresh", no_argument, 0, O_FRESH},
    {"font", required_argument, 0, O_FONT},
    {"attention", required_argument, 0, O_ATTN},
    {"tokens", required_argument, 0, O_TOKENS},
    {"key-tokens", required_argument, 0, O_KTOKENS},
    {"layer", required_argument, 0, O_LAYER},
    {"rollout", no_argument, 0, O_ROLLOUT},
    {"drop", required_argument, 0, O_DROP},
    {"keys", required_argument, 0, O_KEYS},
    {"score", required_argument, 0, O_SCORE},
    {"teach", required_argument, 0, O_TEACH},
    {"steps", required_argument, 0, O_STEPS},
    {"lr", required_argument, 0, O_LR},
    {"optimizer", required_argument, 0, O_OPTIMIZER},
    {"train", required_argument, 0, O_TRAIN},
    {"model", required_argument, 0, O_MODEL},
    {"prepend-bos", no_argument, 0, O_BOS},
    {"export-attention", required_argument, 0, O_EXPATTN},
    {"head-score", required_argument, 0, O_HSCORE},
    {"generate", required_argument, 0, O_GENERATE},
    {"target", required_argument, 0, O_TARGET},
    {"group", required_argument, 0, O_GROUP},
    {"sample", no_argument, 0, O_SAMPLE},
    {"ablate", required_argument, 0, O_ABLATE},
    {"ablate-mean", no_argument, 0, O_ABLMEAN},
    {"top-k", required_argument, 0, O_TOPK},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
    {0, 0, 0, 0},
};

static int usage_err(AttnErr *err, const char *fmt, const char *a, const char *b)
{
    attn_err_set(err, ATTN_E_PARSE, NULL, 0, fmt, a, b);
    return -ATTN_E_PARSE;
}

/* A whole integer in [lo, hi]; junk is a usage error, out of range a value error. */
static int parse_long(const char *s, long lo, long hi, long *out,
                      const char *opt, AttnErr *err)
{
    char *end;
    if (!*s)
        return usage_err(err, "%s needs a number, got '%s'", opt, s);
    long v = strtol(s, &end, 10);
    if (*end)
        return usage_err(err, "%s needs a whole number, got '%s'", opt, s);
    if (v < lo || v > hi)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "%s %s is out of range (%ld to %ld)", opt, s, lo, hi);
    *out = v;
    return 0;
}

static int is_json_file(const char *s)
{
    size_t n = strlen(s);
    struct stat st;
    return n > 5 && strcmp(s + n - 5, ".json") == 0 && stat(s, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* .npy, .npz or .safetensors, in any case: an attention file by its name */
static int is_attention_name(const char *s)
{
    static const char *const ext[] = {".npy", ".npz", ".safetensors"};
    size_t n = strlen(s);
    for (size_t k = 0; k < sizeof ext / sizeof ext[0]; k++) {
        size_t e = strlen(ext[k]);
        if (n > e && strcasecmp(s + n - e, ext[k]) == 0)
            return 1;
    }
    return 0;
}

/* --probe induction[:N], N from 1 to 511 (2N + 1 tokens at most 1023). */
static int parse_probe(Options *o, const char *a, AttnErr *err)
{
    const char *name = "induction";
    size_t n = strlen(name);
    o->probe_n = PROBE_DEFAULT_N;
    if (strncmp(a, name, n) != 0 || (a[n] && a[n] != ':'))
        return usage_err(err, "--probe takes induction or induction:N, got '%s'%s", a, "");
    if (a[n] == ':') {
        char *end;
        errno = 0;
        long v = strtol(a + n + 1, &end, 10);
        if (errno || end == a + n + 1 || *end || v < 1 || v > (PROBE_MAX_TOKENS - 1) / 2)
            return usage_err(err, "--probe induction:N needs N from 1 to 511, got '%s'%s", a, "");
        o->probe_n = (int)v;
    }
    o->probe = 1;
    return 0;
}

/* --seed N: a whole number from 0 to 2^53. */
static int parse_seed(Options *o, const char *a, AttnErr *err)
{
    char *end;
    if (!*a || *a == '-')
        return usage_err(err, "--seed needs a number from 0 to 2^53, got '%s'%s", a, "");
    unsigned long long s = strtoull(a, &end, 10);
    if (*end || s > (1ULL << 53))
        return usage_err(err, "--seed needs a number from 0 to 2^53, got '%s'%s", a, "");
    o->has_seed = 1;
    o->seed = s;
    return 0;
}

/* --generate N, --top-k K: a whole number, 0 or more (else a usage error);
 * one too large for an int is 1 << 30, more than any model takes (N: the
 * positions' check names the limit; K: all tokens). */
static int parse_count(const char *a, const char *opt, int *out, AttnErr *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(a, &end, 10);
    if (*a < '0' || *a > '9' || *end)
        return usage_err(err, "%s needs a whole number, 0 or more, got '%s'", opt, a);
    *out = errno == ERANGE || v > (1 << 30) ? 1 << 30 : (int)v;
    return 0;
}

/* --ablate L.H[,L.H…]: 1-based positive layer and head numbers, stored
 * 0-based (whether the model has them is checked when it opens); a
 * malformed list is a usage error. Repeated flags add to the list. */
static int parse_ablate(Options *o, const char *a, AttnErr *err)
{
    const char *p = a;
    do {
        char *end;
        long v[2];
        for (int k = 0; k < 2; k++) {
            errno = 0;
            v[k] = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
            if (v[k] < 1 || errno == ERANGE || v[k] > 1000000 || (k == 0 && *end != '.') ||
                (k == 1 && *end && *end != ','))
                return usage_err(err, "--ablate needs layer.head pairs, 1-based, separated by "
                                      "commas (--ablate 1.2,2.1), got '%s'%s", a, "");
            p = end + 1;
        }
        if (o->n_ablate == OPT_MAX_ABLATE)
            return usage_err(err, "--ablate %s: at most 256 heads%s", a, "");
        o->ablate_layer[o->n_ablate] = (int)v[0] - 1;
        o->ablate_head[o->n_ablate++] = (int)v[1] - 1;
        if (!*end)
            break;
    } while (1);
    return 0;
}

/* -t X: τ from 1e-6 to 1e6. */
static int parse_temperature(Options *o, const char *a, AttnErr *err)
{
    char *end;
    double t = strtod(a, &end);
    if (!*a || *end)
        return usage_err(err, "--temperature needs a number, got '%s'%s", a, "");
    if (!(t > 0) || !isfinite(t) || t > 1e6)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "--temperature %s: tau must be a number > 0 (and at most 1e6)", a);
    if (t < 1e-6)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "--temperature %s: tau must be at least 1e-6", a);
    o->cfg.temperature = (float)t;
    o->temp_set = 1;
    return 0;
}

/* The options that choose among names: --mode, --print, --view, --matrix,
 * --score, --theme, --color-scale. */
static int parse_choice(Options *o, int c, const char *a, AttnErr *err)
{
    switch (c) {
    case 'm':
        if (strcmp(a, "basic") == 0)
            o->cfg.mode = ATTN_MODE_BASIC;
        else if (strcmp(a, "learned") == 0)
            o->cfg.mode = ATTN_MODE_LEARNED;
        else
            return usage_err(err, "--mode must be basic or learned, got '%s'%s", a, "");
        o->mode_set = 1;
        break;
    case O_PRINT:
        if (strcmp(a, "text") == 0) o->print = PRINT_TEXT;
        else if (strcmp(a, "csv") == 0) o->print = PRINT_CSV;
        else if (strcmp(a, "json") == 0) o->print = PRINT_JSON;
        else if (strcmp(a, "tokens") == 0) o->print = PRINT_TOKENS;
        else if (strcmp(a, "predictions") == 0) o->print = PRINT_PREDICTIONS;
        else if (strcmp(a, "head-scores") == 0) o->print = PRINT_HEAD_SCORES;
        else if (strcmp(a, "logit-lens") == 0) o->print = PRINT_LOGIT_LENS;
        else return usage_err(err, "--print must be text, csv, json, tokens, predictions, head-scores "
                                   "or logit-lens, got '%s'%s", a, "");
        break;
    case O_VIEW:
        if (strcmp(a, "heatmap") == 0) o->view = VIEW_HEATMAP;
        else if (strcmp(a, "lines") == 0) o->view = VIEW_LINES;
        else if (strcmp(a, "both") == 0) o->view = VIEW_BOTH;
        else if (strcmp(a, "grid") == 0) o->view = VIEW_GRID;
        else if (strcmp(a, "heads") == 0) o->view = VIEW_HEADS;
        else return usage_err(err, "--view must be heatmap, lines, both, grid or heads, got '%s'%s", a, "");
        break;
    case O_MATRIX:
        o->matrix_set = 1;
        if (strcmp(a, "weights") == 0) o->matrix = 0;
        else if (strcmp(a, "scores") == 0) o->matrix = 1;
        else if (strcmp(a, "logits") == 0) o->matrix = 2;
        else if (strcmp(a, "norms") == 0) o->matrix = 3;
        else return usage_err(err, "--matrix must be weights, scores, logits or norms, got '%s'%s", a, "");
        break;
    case O_SCORE:
        if ((o->cfg.score = attn_score_parse(a)) < 0) {
            o->cfg.score = ATTN_SCORE_DOT;
            return usage_err(err, "--score must be dot, cosine or additive, got '%s'%s", a, "");
        }
        o->score_set = 1;
        break;
    case O_CSCALE:
        if (strcmp(a, "fixed") == 0) o->color_scale = 0;
        else if (strcmp(a, "max") == 0) o->color_scale = 1;
        else if (strcmp(a, "row") == 0) o->color_scale = 2;
        else return usage_err(err, "--color-scale must be fixed, max or row, got '%s'%s", a, "");
        o->color_scale_set = 1;
        break;
    case O_THEME:
        if (strcmp(a, "light") == 0) o->theme_dark = 0;
        else if (strcmp(a, "dark") == 0) o->theme_dark = 1;
        else return usage_err(err, "--theme must be light or dark, got '%s'%s", a, "");
        o->theme_set = 1;
        break;
    case O_HSCORE:
        if ((o->head_score = head_score_from_name(a)) < 0) {
            o->head_score = HEAD_SCORE_INDUCTION;
            return usage_err(err, "--head-score must be previous, self, first, duplicate, induction, "
                                  "entropy or distance, got '%s'%s", a, "");
        }
        o->head_score_set = 1;
        break;
    }
    return 0;
}

/* The options that take a number: --line, --heads, --head, --scale,
 * --query (--seed and -t have their own). */
static int parse_number(Options *o, int c, const char *a, AttnErr *err)
{
    long v;
    int rc = 0;
    switch (c) {
    case O_LINE:
        if ((rc = parse_long(a, 1, 1000000000L, &v, "--line", err)) == 0)
            o->line = v;
        break;
    case 'H':
        if ((rc = parse_long(a, 1, ATTN_MAX_HEADS, &v, "--heads", err)) == 0) {
            o->cfg.heads = (int)v;
            o->heads_set = 1;
        }
        break;
    case O_HEAD:
        o->head_set = 1;
        if (strcmp(a, "avg") == 0)
            o->head = -1;
        else if ((rc = parse_long(a, 1, 1000000, &v, "--head", err)) == 0)
            o->head = (int)v - 1;
        break;
    case O_LAYER:
        o->layer_set = 1;
        if (strcmp(a, "avg") == 0)
            o->layer = -1;
        else if ((rc = parse_long(a, 1, 1000000, &v, "--layer", err)) == 0)
            o->layer = (int)v - 1;
        break;
    case O_SCALE:
        if ((rc = parse_long(a, 1, 8, &v, "--scale", err)) == 0)
            o->scale = (int)v;
        break;
    case O_QUERY:
        if ((rc = parse_long(a, 1, 1000000, &v, "--query", err)) == 0)
            o->query = (int)v - 1;
        break;
    }
    return rc;
}

/* Teach mode's options: --teach TARGET, --steps, --lr, --optimizer, --train. */
static int parse_teach(Options *o, int c, const char *a, AttnErr *err)
{
    char *end;
    long v;
    int rc = 0;
    o->teach_set |= c != O_TEACH;
    switch (c) {
    case O_TEACH:
        if (!*a)
            return usage_err(err, "--teach needs a target: a CSV file (--print csv format) or "
                                  "self, previous, next, first%s%s", "", "");
        o->teach = a;
        break;
    case O_STEPS:
        if ((rc = parse_long(a, -1000000000L, 1000000000L, &v, "--steps", err)) < 0)
            return rc;
        if (v < 0)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "--steps %s: must be 0 or more", a);
        o->steps = v;
        break;
    case O_LR: {
        double x = strtod(a, &end);
        if (!*a || *end)
            return usage_err(err, "--lr needs a number, got '%s'%s", a, "");
        if (!(x > 0.0) || !isfinite(x) || x > 1e6)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "--lr %s: the learning rate must be above 0 (and at most 1e6)", a);
        o->lr = (float)x;
        break;
    }
    case O_OPTIMIZER:
        if ((o->optimizer = teach_opt_parse(a)) < 0)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "--optimizer %s: unknown optimiser (sgd or adam)", a);
        break;
    default: /* O_TRAIN */
        if ((o->train = teach_train_parse(a)) < 0)
            return usage_err(err, "--train needs a list of wq, wk, x and v (each once, comma-"
                                  "separated), got '%s'%s", a, "");
        break;
    }
    return 0;
}

/* One option c (getopt_long's value) with its argument a. */
static int parse_option(Options *o, int c, const char *a, int argc, char **argv, AttnErr *err)
{
    switch (c) {
    case 's': o->sentence = a; break;
    case 'f': o->sentence_file = a; break;
    case 'e': o->embeddings = a; break;
    case 'w': o->weights = a; break;
    case O_SESSION: o->session = a; break;
    case O_FONT: o->font = a; break;
    case O_EXPORTDIR: o->export_dir = a; break;
    case O_CMAP: o->colormap = a; break;
    case O_LINE: case 'H': case O_HEAD: case O_SCALE: case O_QUERY: case O_LAYER:
        return parse_number(o, c, a, err);
    case O_ATTN: o->attention = a; break;
    case O_MODEL: o->model = a; break;
    case O_BOS: o->prepend_bos = 1; break;
    case O_EXPATTN: o->export_attention = a; break;
    case O_TARGET: o->target = a; break;
    case O_GROUP:
        if (strcmp(a, "cross") == 0) o->group = GROUP_CROSS;
        else if (strcmp(a, "encoder") == 0) o->group = GROUP_ENCODER;
        else if (strcmp(a, "decoder") == 0) o->group = GROUP_DECODER;
        else return usage_err(err, "--group must be encoder, decoder or cross, got '%s'%s", a, "");
        o->group_set = 1;
        break;
    case O_TOKENS: o->tokens = a; break;
    case O_KTOKENS: o->key_tokens = a; break;
    case O_ROLLOUT: o->rollout = 1; break;
    case O_DROP: o->drop = a; break;
    case O_KEYS:
        if (!*a) /* the window's empty second bar means self-attention; here it is a slip */
            return usage_err(err, "--keys needs a sentence, got ''%s%s "
                                  "(leave --keys out for self-attention)", "", "");
        o->keys = a;
        break;
    case 'm': case O_PRINT: case O_VIEW: case O_MATRIX: case O_THEME: case O_SCORE:
    case O_CSCALE: case O_HSCORE:
        return parse_choice(o, c, a, err);
    case O_TEACH: case O_STEPS: case O_LR: case O_OPTIMIZER: case O_TRAIN:
        return parse_teach(o, c, a, err);
    case O_SEED: return parse_seed(o, a, err);
    case O_GENERATE:
        o->generate_set = 1;
        o->generate_arg = a;
        return parse_count(a, "--generate", &o->generate, err);
    case O_SAMPLE: o->sample = 1; break;
    case O_ABLATE: return parse_ablate(o, a, err);
    case O_ABLMEAN: o->ablate_mean = 1; break;
    case O_TOPK:
        o->top_k_set = 1;
        return parse_count(a, "--top-k", &o->top_k, err);
    case O_PROBE: return parse_probe(o, a, err);
    case 't': return parse_temperature(o, a, err);
    case O_CAUSAL: o->cfg.causal = 1; o->causal_set = 1; break;
    case O_NOSCALE: o->cfg.scale = 0; o->scale_set = 1; break;
    case O_POSENC: o->cfg.posenc = 1; o->posenc_set = 1; break;
    case O_EXPORT:
        if (o->n_exports == OPT_MAX_EXPORTS)
            return usage_err(err, "at most %s --export options%s", "16", "");
        o->exports[o->n_exports++] = a;
        break;
    case O_ALLLINES: o->all_lines = 1; break;
    case O_FRESH: o->fresh = 1; break;
    case 'h': o->help = 1; break;
    case 'V': o->version = 1; break;
    case ':':
        return usage_err(err, "option '%s' needs a value%s", argv[optind - 1], "");
    default:
        return usage_err(err, "unknown option '%s'%s",
                         optind > 0 && optind <= argc ? argv[optind - 1] : "?", "");
    }
    return 0;
}

/* What follows the options: a lone session file, or the sentence's words. */
static int parse_rest(Options *o, int argc, char **argv, AttnErr *err)
{
    int rest = argc - optind;
    if (rest == 1 && !o->sentence && !o->session && !o->attention && is_attention_name(argv[optind])) {
        o->attention = argv[optind]; /* opened (or said missing) in main */
    } else if (rest == 1 && !o->sentence && !o->session && is_json_file(argv[optind])) {
        o->session = argv[optind];
    } else if (rest > 0) {
        if (o->sentence)
            return usage_err(err, "give the sentence either with -s or as words, not both%s%s", "", "");
        size_t n = 0;
        for (int i = optind; i < argc; i++)
            n += strlen(argv[i]) + 1;
        o->sentence_buf = malloc(n + 1);
        if (!o->sentence_buf)
            return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        char *p = o->sentence_buf;
        for (int i = optind; i < argc; i++) {
            size_t l = strlen(argv[i]);
            memcpy(p, argv[i], l);
            p += l;
            *p++ = i + 1 < argc ? ' ' : '\0';
        }
        o->sentence = o->sentence_buf;
    }
    return 0;
}

/* The attention file's options make sense only with one (a .json given
 * alone may still turn out to be one: main decides). */
static int check_attention(const Options *o, AttnErr *err)
{
    int file = o->attention || o->session || o->model;
    if (!file && (o->tokens || o->key_tokens || o->layer_set || o->rollout || o->drop))
        return usage_err(err, "--tokens, --key-tokens, --layer, --rollout and --drop need an "
                              "attention file (--attention FILE)%s%s", "", "");
    if (o->key_tokens && !o->tokens)
        return usage_err(err, "--key-tokens needs --tokens (the query tokens)%s%s", "", "");
    if (o->attention && (o->keys || o->score_set))
        return usage_err(err, "--keys and --score apply to a sentence; an attention file has its "
                              "maps (and its key tokens: --key-tokens FILE)%s%s", "", "");
    if (o->attention && (o->sentence || o->sentence_file))
        return usage_err(err, "give either an attention file or a sentence, not both%s%s", "", "");
    if (o->view == VIEW_GRID && !file)
        return usage_err(err, "--view grid needs an attention file%s%s", "", "");
    if ((o->view == VIEW_HEADS || o->print == PRINT_HEAD_SCORES) && !file)
        return usage_err(err, "--print head-scores and --view heads need an attention file or "
                              "--model DIR|NAME%s%s", "", "");
    if (o->head_score_set && o->view != VIEW_HEADS)
        return usage_err(err, "--head-score needs --view heads (the score overview)%s%s", "", "");
    return 0;
}

/* A model's options need --model; a model takes its text, not a second
 * sentence, an attention file or sentence-model settings. */
static int check_model(const Options *o, AttnErr *err)
{
    if (!o->model && (o->print == PRINT_TOKENS || o->print == PRINT_PREDICTIONS ||
                      o->print == PRINT_LOGIT_LENS || o->prepend_bos || o->export_attention || o->probe))
        return usage_err(err, "--print tokens, --print predictions, --print logit-lens, --prepend-bos, "
                              "--probe and --export-attention need --model DIR|NAME%s%s", "", "");
    if (o->target && !o->model)
        return usage_err(err, "--target is an encoder-decoder's (T5, BART) decoder text: it needs "
                              "--model DIR|NAME%s%s", "", "");
    if (o->group_set && !o->model && !o->attention && !o->session)
        return usage_err(err, "--group picks an encoder-decoder's maps: it needs --model DIR|NAME or "
                              "its .npz%s%s", "", "");
    if (o->target && (o->generate_set || o->probe))
        return usage_err(err, "--target is not for --generate or --probe%s%s", "", "");
    if (o->probe && o->sentence)
        return usage_err(err, "--probe runs the model on random tokens, not on a text: leave the "
                              "sentence out%s%s", "", "");
    if (o->model && (o->attention || o->keys || o->score_set || o->teach || o->sentence_file || o->session ||
                     o->tokens))
        return usage_err(err, "--model computes a language model on its text: not with --attention, "
                              "--keys, --score, --teach, --sentence-file, --session or --tokens%s%s", "", "");
    return 0;
}

/* Generation's options: --generate needs a model and a text; --sample,
 * --top-k, and with --generate a temperature or seed, say how it samples
 * (in the window, how Ctrl+G samples). --ablate applies to the command
 * line's prints and to the window (Ctrl+K switches heads there). */
static int check_generate(const Options *o, AttnErr *err)
{
    if (o->generate_set && !o->model)
        return usage_err(err, "--generate continues a language model's text: it needs --model DIR|NAME%s%s", "", "");
    if (o->generate_set && o->probe)
        return usage_err(err, "--generate continues a text, --probe runs on random tokens: not both%s%s", "", "");
    if (o->n_ablate && !o->model)
        return usage_err(err, "--ablate switches off a language model's heads: it needs --model DIR|NAME%s%s", "", "");
    if (o->ablate_mean && !o->n_ablate)
        return usage_err(err, "--ablate-mean says how --ablate L.H switches heads off: it needs --ablate%s%s", "", "");
    if (o->sample && !o->generate_set && (options_headless(o) || !o->model)) /* the window: how Ctrl+G picks */
        return usage_err(err, "--sample says how --generate N (or the window's Ctrl+G) picks its tokens: it "
                              "needs --generate N, or --model in the window%s%s", "", "");
    if (o->top_k_set && !o->sample)
        return usage_err(err, "--top-k samples: it needs --generate N --sample%s%s", "", "");
    if (o->generate_set && !o->sample && (o->temp_set || o->has_seed))
        return usage_err(err, "--generate without --sample is greedy: %s needs --sample%s",
                         o->temp_set ? "--temperature" : "--seed", "");
    return 0;
}

/* Teach mode's options need --teach; v trains only with the additive score;
 * an attention file has nothing to teach. */
static int check_teach(const Options *o, AttnErr *err)
{
    if (o->teach_set && !o->teach)
        return usage_err(err, "--steps, --lr, --optimizer and --train need --teach TARGET%s%s", "", "");
    if (o->teach && (o->train & TEACH_V) && o->cfg.score != ATTN_SCORE_ADDITIVE)
        return usage_err(err, "--train v needs --score additive: v is the additive score's "
                              "vector%s%s", "", "");
    if (o->teach && (o->attention || o->all_lines))
        return usage_err(err, "--teach teaches one sentence's attention: not with %s%s",
                         o->attention ? "an attention file" : "--all-lines", "");
    return 0;
}

int options_parse(Options *o, int argc, char **argv, AttnErr *err)
{
    memset(o, 0, sizeof *o);
    o->cfg = attn_config_default();
    o->query = -1;
    o->scale = 2;
    o->color_scale = 1; /* 0 to the map's max: the lesson's links stand out */
    o->layer = 0;
    o->steps = 200;
    o->lr = 0.1f;
    o->optimizer = TEACH_OPT_ADAM;
    o->train = TEACH_WQ | TEACH_WK;
    o->head_score = HEAD_SCORE_INDUCTION;
    optind = 0; /* full reset of getopt's state (GNU) */
    opterr = 0;
    int c, rc;
    while ((c = getopt_long(argc, argv, ":s:f:e:w:m:H:t:hV", longopts, NULL)) != -1)
        if ((rc = parse_option(o, c, optarg, argc, argv, err)) < 0)
            return rc;
    if ((rc = parse_rest(o, argc, argv, err)) < 0)
        return rc;
    if (o->sentence && o->sentence_file)
        return usage_err(err, "give either a sentence or --sentence-file, not both%s%s", "", "");
    if (o->line && !o->sentence_file)
        return usage_err(err, "--line needs --sentence-file%s%s", "", "");
    if (o->all_lines && !o->sentence_file)
        return usage_err(err, "--all-lines needs --sentence-file%s%s", "", "");
    if (o->all_lines && !o->n_exports)
        return usage_err(err, "--all-lines needs --export FILE%s%s", "", "");
    if (o->keys && o->causal_set)
        return usage_err(err, "--keys and --causal do not go together: the causal mask applies "
                              "to self-attention only (a key sentence has no 'after the query')%s%s",
                         "", "");
    if ((rc = check_teach(o, err)) < 0)
        return rc;
    if ((rc = check_model(o, err)) < 0)
        return rc;
    if ((rc = check_generate(o, err)) < 0)
        return rc;
    return check_attention(o, err);
}

int options_headless(const Options *o)
{
    return o->print != PRINT_NONE || o->n_exports > 0 || o->export_attention || o->generate_set;
}

void options_free(Options *o)
{
    free(o->sentence_buf);
    o->sentence_buf = NULL;
}
