#define _DEFAULT_SOURCE
/* The model source's opening and command line (model_source.h): a folder,
 * an installed model or a name in the Hugging Face cache opened with its
 * tokenizer (lm.h picks the architecture); a text's tokens as Hugging
 * Face's encode gives them (the forward of its first maps: model_opening.c);
 * --print tokens|predictions|csv..., --export-attention, --export. The
 * labels and the Imported of a forward's maps, which the window uses too
 * (model_internal.h). */
#include "attnviz/attn_write.h"
#include "attnviz/attnio.h"
#include "attnviz/bpe.h"
#include "attnviz/bpe_files.h"
#include "attnviz/model_file.h"
#include "attnviz/model_source.h"
#include "attnviz/model_stores.h"
#include "attnviz/import.h"
#include "attnviz/io.h"
#include "attnviz/lm.h"
#include "attnviz/maps_shown.h"
#include "attnviz/options.h"
#include "attnviz/paths.h"
#include "attnviz/tokenizer.h"
#include "model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- opening ------------------------------------------------------------------------ */

void model_opened_free(ModelOpened *g)
{
    if (!g)
        return;
    if (g->im) {
        import_close(g->im);
        free(g->im);
    }
    bpe_destroy(g->bpe);
    lm_close(&g->lm);
    bpe_ids_free(&g->ids);
    bpe_ids_free(&g->tgt);
    free(g->text);
    free(g);
}

int model_folder_check(const char *dir, AttnErr *err)
{
    char buf[4200];
    struct stat st;
    snprintf(buf, sizeof buf, "%s/config.json", dir);
    if (stat(buf, &st) == 0)
        return 0;
    return attn_err_set(err, ATTN_E_IO, dir, 0, "not a model folder: no config.json (a model "
                        "folder holds config.json, model.safetensors, tokenizer.json)");
}

int model_is_gguf(const char *path)
{
    char magic[4] = {0};
    struct stat st;
    FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
    int yes = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "GGUF", 4) == 0;
    if (f)
        fclose(f);
    return yes;
}

/* A model folder: the path when it is one, else the installed models
 * (nano-sort), else the Hugging Face cache; or a GGUF file (*gguf 1).
 * Malloc'd into *dir. */
static int find_model(const char *name, char **dir, int *gguf, AttnErr *err)
{
    struct stat st;
    char buf[4096], rel[300];
    *gguf = 0;
    if (stat(name, &st) == 0 && S_ISREG(st.st_mode)) {
        if (!(*gguf = model_is_gguf(name)))
            return attn_err_set(err, ATTN_E_IO, name, 0, "not a model: not a GGUF file (a model "
                                "is a GGUF file or a folder holding config.json, "
                                "model.safetensors, tokenizer.json)");
        return (*dir = strdup(name)) ? 0 : attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    }
    if (stat(name, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (model_folder_check(name, err) < 0)
            return -ATTN_E_IO;
        return (*dir = strdup(name)) ? 0 : attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    }
    snprintf(rel, sizeof rel, "models/%.280s", name);
    if (!strchr(name, '/') && paths_find_data(rel, buf, sizeof buf) == 0)
        return (*dir = strdup(buf)) ? 0 : attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    int rc = hf_model_find(name, dir, err);
    if (rc != -ATTN_E_NOT_FOUND)
        return rc;
    /* then Ollama's and LM Studio's stores (a GGUF file) */
    char cache[1024] = "", looked[1024] = "", hf[sizeof err->msg];
    AttnErr ignored = {0};
    hf_cache_dir(cache, sizeof cache, &ignored);
    snprintf(hf, sizeof hf, "%s", err->msg);
    rc = model_store_find(name, dir, looked, sizeof looked, err);
    if (rc == 0)
        *gguf = 1;
    if (rc <= 0)
        return rc;
    if (strstr(hf, "huggingface-cli download")) /* a hub name: where it looked, how to get it */
        return attn_err_set(err, ATTN_E_NOT_FOUND, name, 0, "%s; nor in Ollama's or LM Studio's "
                            "stores (looked for %s)", hf, looked);
    return attn_err_set(err, ATTN_E_NOT_FOUND, name, 0, "no such folder or file, and not in the "
                        "Hugging Face cache %.120s nor in Ollama's or LM Studio's stores "
                        "(looked for %.300s)", cache[0] ? cache : "(none: no HOME)", looked);
}

/* ids = the tokens of text as Hugging Face's encode gives them (the
 * tokenizer's template around them: Llama's BOS first), and the model's
 * bos token first when asked (--prepend-bos) and the template adds none. An
 * empty text has no tokens (not a lone BOS). */
int model_encode(const ModelOpened *g, const char *text, size_t len, BpeIds *ids, AttnErr *err)
{
    int n_before = 0;
    ids->n = 0;
    if (len == 0)
        return 0;
    bpe_template_before(g->bpe, &n_before);
    if (g->prepend_bos && n_before == 0 && g->lm.info.bos_id >= 0) {
        if (ids->cap < 1) {
            int *p = realloc(ids->id, 16 * sizeof *p);
            if (!p)
                return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
            ids->id = p;
            ids->cap = 16;
        }
        ids->id[ids->n++] = g->lm.info.bos_id;
    }
    return bpe_encode_checked(g->bpe, text, len, ids, err);
}

/* 1 when c (n bytes, one character of the text) has no token of its own:
 * alone it encodes to nothing, or, for a character not white space, to
 * tokens whose text is only white space (a Metaspace's '▁' before a letter
 * the vocabulary lacks; a space alone may decode to nothing, the decoder
 * stripping it). A character the normalizer rewrites (NFKC's ﬁ → fi) or
 * the unknown token stands for is shown, so it is not counted. */
static int char_left_out(const Bpe *b, const char *c, size_t n, BpeIds *ids)
{
    unsigned cp = 0;
    char *d = NULL;
    size_t dn = 0;
    ids->n = 0;
    tok_utf8_decode((const unsigned char *)c, n, &cp);
    if (bpe_encode(b, c, n, ids) < 0)
        return 0; /* out of memory: nothing said */
    if (ids->n == 0 || bpe_is_space(cp))
        return ids->n == 0;
    if (bpe_decode(b, ids->id, ids->n, 0, &d, &dn) < 0)
        return 0;
    int left = 1;
    for (size_t i = 0; i < dn && left; i++) {
        unsigned ch = 0;
        int k = tok_utf8_decode((const unsigned char *)d + i, dn - i, &ch);
        left = bpe_is_space(ch);
        i += (size_t)(k > 1 ? k - 1 : 0);
    }
    free(d);
    return left;
}

/* The characters seen so far (each checked once): their bytes in a buffer. */
typedef struct Seen {
    char buf[2048];
    size_t used;
} Seen;

static int seen_add(Seen *s, const char *c, size_t n)
{
    for (size_t i = 0; i < s->used; i += (unsigned char)s->buf[i] + 1u)
        if ((unsigned char)s->buf[i] == n && memcmp(s->buf + i + 1, c, n) == 0)
            return 0;
    if (s->used + n + 1 > sizeof s->buf)
        return 0; /* a text of that many different characters: the rest unchecked */
    s->buf[s->used] = (char)n;
    memcpy(s->buf + s->used + 1, c, n);
    s->used += n + 1;
    return 1;
}

int model_left_out(const ModelOpened *g, const char *text, size_t len, const BpeIds *ids, char *out, size_t cap)
{
    char *d = NULL;
    size_t dn = 0, u = 0;
    int count = 0;
    if (cap)
        out[0] = '\0';
    /* spaces dropped by design (WordPiece) or made the next piece's ▁
     * (Unigram), the rest [UNK] at worst */
    if (bpe_is_wordpiece(g->bpe) || bpe_is_unigram(g->bpe))
        return 0;
    /* the usual case: the tokens give the text back whole */
    if (bpe_decode(g->bpe, ids->id, ids->n, 1, &d, &dn) == 0 && dn == len && memcmp(d, text, len) == 0) {
        free(d);
        return 0;
    }
    free(d);
    Seen *seen = malloc(sizeof *seen);
    BpeIds alone = {0};
    if (!seen)
        return 0;
    seen->used = 0;
    for (size_t i = 0; i < len;) {
        int k = tok_utf8_len((const unsigned char *)text + i, len - i);
        size_t n = k > 0 ? (size_t)k : 1; /* an invalid byte alone */
        if (seen_add(seen, text + i, n) && char_left_out(g->bpe, text + i, n, &alone)) {
            char *c = malloc(n + 1);
            if (c) {
                memcpy(c, text + i, n);
                c[n] = '\0';
            }
            c = model_visible(c);
            int space = n == 1 && text[i] == ' ';
            if (count < 12 && c)
                u += (size_t)snprintf(out + u, u < cap ? cap - u : 0, "%s\xE2\x80\x9C%s\xE2\x80\x9D",
                                      count ? ", " : "", space ? SPACE_MARK : c);
            u = u < cap ? u : cap;
            free(c);
            count++;
        }
        i += n;
    }
    if (count > 12)
        snprintf(out + u, u < cap ? cap - u : 0, " and %d more", count - 12);
    bpe_ids_free(&alone);
    free(seen);
    return count;
}

int model_left_out_say(const ModelOpened *g, const char *text, size_t len, const BpeIds *ids, char *msg, size_t cap)
{
    char list[400];
    int n = model_left_out(g, text, len, ids, list, sizeof list);
    if (n > 0)
        snprintf(msg, cap, "left out of the tokens: %s (%s's vocabulary has no token for %s)", list, g->name,
                 n == 1 ? "it" : "them");
    else if (cap)
        msg[0] = '\0';
    return n;
}

/* Token id's label as stored (Ġ for its space, ‹0xNN› for a byte that is
 * not whole UTF-8) or as shown (␣ for the space); none (an output row no
 * token has, as a padded vocabulary's) is `none`. Malloc'd. */
char *model_token_text(const Bpe *b, int id, const char *space, const char *none)
{
    char small[256];
    size_t n = bpe_token_text(b, id, space, small, sizeof small);
    if (n < sizeof small)
        return strdup(n ? small : none);
    char *big = malloc(n + 1);
    if (big)
        bpe_token_text(b, id, space, big, n + 1);
    return big;
}

/* A shown label's control characters made visible (a line break in a token
 * would break the label's line): ↵ for \n, → for \t, ␍ for \r, ‹0xNN›
 * for the others. Frees t; malloc'd. */
char *model_visible(char *t)
{
    size_t n = 0;
    for (const char *p = t; p && *p; p++)
        n += (unsigned char)*p < 0x20 ? 10 : 1; /* ‹0xNN› at most */
    if (!t || n == strlen(t))
        return t;
    char *out = malloc(n + 1), *o = out;
    for (const char *p = t; out && *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20)
            *o++ = (char)c;
        else if (c == '\n' || c == '\t' || c == '\r')
            o += sprintf(o, "%s", c == '\n' ? "\xE2\x86\xB5" : c == '\t' ? "\xE2\x86\x92" : "\xE2\x90\x8D");
        else
            o += sprintf(o, "\xE2\x80\xB9" "0x%02X" "\xE2\x80\xBA", c);
    }
    if (out)
        *o = '\0';
    free(t);
    return out;
}

int model_mask_id(const Bpe *b)
{
    int id = bpe_token_id(b, "[MASK]", 6);
    return id >= 0 ? id : bpe_token_id(b, "<mask>", 6);
}

int model_mask_pos(const ModelOpened *g, const int *ids, int n)
{
    int mask = g->lm.info.masked_lm ? model_mask_id(g->bpe) : -1;
    for (int i = 0; mask >= 0 && i < n; i++)
        if (ids[i] == mask)
            return i;
    return -1;
}

char *model_shown_label(const Bpe *b, int id)
{
    return model_visible(model_token_text(b, id, SPACE_MARK, "?"));
}

/* The maps of ids[0..T) (packed L × H × T × T, owned from now on) as an
 * Imported named name, its labels the tokens' texts. */
/* The Imported's maps: made when asked from the snapshot. */
static void snapshot_map(const void *user, int l, int h, float *out)
{
    rt_maps_map(user, l, h, out, (size_t)rt_maps_Tk(user));
}

static int snapshot_each(const void *user, void (*fn)(void *, int, int, const float *), void *fn_user)
{
    return rt_maps_each(user, fn, fn_user);
}

static void snapshot_norms_map(const void *user, int l, int h, float *out)
{
    rt_maps_norms_map(user, l, h, out, (size_t)rt_maps_Tk(user));
}

static int snapshot_norms_each(const void *user, void (*fn)(void *, int, int, const float *), void *fn_user)
{
    return rt_maps_norms_each(user, fn, fn_user);
}

static void snapshot_free(void *user)
{
    rt_maps_free(user);
}

/* The labels of ids[0..T) as stored (*tok) and shown (*shown), malloc'd
 * and NULL-ended: 0, or -1 (out of memory; both freed). */
static int labels(const Bpe *b, const int *ids, int T, char ***tok, char ***shown)
{
    *tok = calloc((size_t)T + 1, sizeof **tok);
    *shown = calloc((size_t)T + 1, sizeof **shown);
    int ok = *tok && *shown;
    for (int i = 0; ok && i < T; i++)
        ok = ((*tok)[i] = model_token_text(b, ids[i], "\xC4\xA0", "?")) && ((*shown)[i] = model_shown_label(b, ids[i]));
    if (!ok) {
        attn_tokens_free(*tok);
        attn_tokens_free(*shown);
        *tok = *shown = NULL;
    }
    return ok ? 0 : -1;
}

Imported *model_maps_imported(const Bpe *b, const char *name, RtMaps *maps, const int *ids, int T, int L, int H,
                               AttnErr *err)
{
    return model_maps_imported_qk(b, name, maps, ids, T, NULL, T, L, H, err);
}

Imported *model_maps_imported_qk(const Bpe *b, const char *name, RtMaps *maps, const int *ids, int T,
                                 const int *kids, int Tk, int L, int H, AttnErr *err)
{
    char **tok = NULL, **shown = NULL, **ktok = NULL, **kshown = NULL;
    Imported *im = malloc(sizeof *im);
    int ok = im && labels(b, ids, T, &tok, &shown) == 0 && (!kids || labels(b, kids, Tk, &ktok, &kshown) == 0);
    if (!ok) {
        attn_tokens_free(tok);
        attn_tokens_free(shown);
        rt_maps_free(maps);
        free(im);
        attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
        return NULL;
    }
    int *windows = NULL, slides = 0, causal = 1;
    for (int l = 0; l < L; l++) {
        slides |= rt_maps_window(maps, l) > 0;
        causal &= rt_maps_causal(maps, l);
    }
    if (slides && (windows = malloc(sizeof *windows * (size_t)L)) != NULL)
        for (int l = 0; l < L; l++)
            windows[l] = rt_maps_window(maps, l);
    ImportMaps from = {snapshot_map, snapshot_each, maps, snapshot_free, !rt_maps_tame(maps)};
    if (import_from_maps(im, name, &from, L, H, T, kids ? Tk : T, tok, ktok, err) < 0) {
        free(windows);
        attn_tokens_free(shown);
        attn_tokens_free(kshown);
        free(im);
        return NULL;
    }
    if (rt_maps_has_norms(maps)) { /* the value-weighted maps from the same copy */
        ImportMaps norms = {snapshot_norms_map, snapshot_norms_each, maps, NULL, 0};
        import_set_norms(im, &norms);
    }
    for (int i = 0; i < T; i++) { /* labels with the space marker */
        free(im->q_shown[i]);
        im->q_shown[i] = shown[i];
    }
    free(shown);
    for (int j = 0; kshown && im->k_shown && j < Tk; j++) { /* a cross group's keys: the source's */
        free(im->k_shown[j]);
        im->k_shown[j] = kshown[j];
        kshown[j] = NULL;
    }
    attn_tokens_free(kshown); /* (NULL-ended: what was moved is NULL now, the rest freed) */
    /* a causal model's keys after each query are masked, in the window as in
       the exports; an encoder's (BERT's) maps are full squares */
    im->causal = causal;
    im->windows = windows; /* and those outside a layer's sliding window */
    return im;
}

int model_open_path(const char *path, int prepend_bos, ModelOpened **out, AttnErr *err)
{
    char *dir = NULL;
    *out = NULL;
    ModelOpened *g = calloc(1, sizeof *g);
    if (!g)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    g->prepend_bos = prepend_bos;
    snprintf(g->path, sizeof g->path, "%s", path);
    int gguf = 0, rc = find_model(path, &dir, &gguf, err);
    if (rc == 0) {
        if (!realpath(dir, g->dir))
            snprintf(g->dir, sizeof g->dir, "%s", dir);
        rc = gguf ? lm_open_gguf(&g->lm, dir, err) : lm_open(&g->lm, dir, err);
    }
    if (rc == 0)
        rc = gguf ? model_file_gguf_vocab(g->lm.model, &g->bpe, err)
                  : bpe_load_dir(&g->bpe, dir, err);
    if (rc == 0 && bpe_n_vocab(g->bpe) > g->lm.info.n_vocab)
        rc = attn_err_set(err, ATTN_E_RANGE, dir, 0, "the tokenizer has %d tokens, the model's %s only %d rows",
                          bpe_n_vocab(g->bpe), g->lm.info.embed_name, g->lm.info.n_vocab);
    /* the name: the folder's last part, trailing slashes aside ("dir/" is "dir") */
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    const char *base = path + len;
    while (base > path && base[-1] != '/')
        base--;
    if (len - (size_t)(base - path) > 5 && strncmp(path + len - 5, ".gguf", 5) == 0)
        len -= 5; /* a GGUF file: its name without the extension */
    snprintf(g->name, sizeof g->name, "%.*s", (int)(path + len - base), base);
    free(dir);
    if (rc < 0) {
        model_opened_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

int model_summaries_init(ModelSummaries *m, const LmInfo *info, const int *ids, int T)
{
    *m = (ModelSummaries){maps_thumb_side(info->n_layer, info->n_head), 0, 0, T, info->n_head,
                          info->n_layer, NULL, NULL, ids, 0};
    import_thumb_size(T, T, m->side, &m->tq, &m->tk);
    size_t n = (size_t)m->L * m->H;
    m->thumbs = calloc(n * (size_t)m->tq * m->tk + 1, sizeof *m->thumbs);
    m->scores = malloc(sizeof *m->scores * n);
    for (size_t k = 0; m->scores && k < n; k++)
        for (int s = 0; s < HEAD_SCORE_COUNT; s++)
            m->scores[k].s[s] = HEAD_SCORE_NONE;
    if (m->thumbs && m->scores)
        return 0;
    model_summaries_free(m);
    return -ATTN_E_NOMEM;
}

static void summary_of(void *user, int l, int h, const float *map)
{
    ModelSummaries *m = user;
    size_t k = (size_t)l * m->H + h;
    import_thumb_map(map, m->T, m->T, m->side, m->thumbs + k * m->tq * m->tk);
    head_scores(map, m->T, m->T, m->ids, 0, &m->scores[k]);
}

void model_summaries_layer(ModelSummaries *m, const Lm *lm, int layer)
{
    if (m->thumbs && (m->norms ? lm_layer_norms_each : lm_layer_each)(lm, layer, summary_of, m) < 0)
        model_summaries_free(m); /* the window makes them */
}

float *model_summaries_copy(const ModelSummaries *m, HeadScores **scores)
{
    size_t n = (size_t)m->L * m->H, nt = n * m->tq * m->tk;
    float *t = m->thumbs ? malloc(sizeof *t * (nt + 1)) : NULL;
    *scores = t ? malloc(sizeof **scores * n) : NULL;
    if (!t || !*scores) {
        free(t);
        free(*scores);
        *scores = NULL;
        return NULL;
    }
    memcpy(t, m->thumbs, sizeof *t * nt);
    memcpy(*scores, m->scores, sizeof **scores * n);
    return t;
}

void model_summaries_free(ModelSummaries *m)
{
    free(m->thumbs);
    free(m->scores);
    m->thumbs = NULL;
    m->scores = NULL;
}

/* ---- the command line ---------------------------------------------------------------- */

int model_print_predictions(FILE *f, ModelOpened *g, int pos, AttnErr *err)
{
    int ids[LM_TOP_K];
    float probs[LM_TOP_K];
    int k = g->lm.info.n_vocab < LM_TOP_K ? g->lm.info.n_vocab : LM_TOP_K;
    int rc = lm_top_k(&g->lm, pos, k, ids, probs, err);
    if (rc < 0)
        return rc;
    for (int r = 0; r < k; r++) {
        char *t = model_token_text(g->bpe, ids[r], NULL, ""); /* "": no token has that row */
        fprintf(f, "%d\t%.6f\t", ids[r], (double)probs[r]);
        io_json_string(f, t ? t : "");
        fputc('\n', f);
        free(t);
    }
    return ferror(f) ? attn_err_set(err, ATTN_E_IO, "stdout", 0, "write failed") : 0;
}

/* --print logit-lens (model_source.h): layers 0 (the embeddings)
 * to L, ranks 1 to 5, the token a JSON string as --print predictions has
 * it; a forward of the text from pos on of its own. */
int model_print_logit_lens(FILE *f, ModelOpened *g, int pos, AttnErr *err)
{
    int L1 = g->lm.info.n_layer + 1, k = g->lm.info.n_vocab < LENS_TOP_K ? g->lm.info.n_vocab : LENS_TOP_K;
    int *ids = malloc((size_t)L1 * k * sizeof *ids);
    float *probs = malloc((size_t)L1 * k * sizeof *probs);
    int rc = ids && probs ? lm_logit_lens(&g->lm, g->ids.id, g->ids.n, pos, k, ids, probs, err)
                          : attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
    if (rc == 0)
        fputs("layer,rank,id,token,prob\n", f);
    for (int l = 0; rc == 0 && l < L1; l++)
        for (int r = 0; r < k; r++) {
            int id = ids[l * k + r];
            char *t = model_token_text(g->bpe, id, NULL, "");
            fprintf(f, "%d,%d,%d,", l, r + 1, id);
            io_json_string(f, t ? t : "");
            fprintf(f, ",%.6g\n", (double)probs[l * k + r]);
            free(t);
        }
    free(ids);
    free(probs);
    if (rc == 0 && ferror(f))
        rc = attn_err_set(err, ATTN_E_IO, "stdout", 0, "write failed");
    return rc;
}


/* --ablate L.H,…: the heads switched off in g's model (zeroed, or their mean
 * with --ablate-mean) before anything is computed; a layer or head the
 * model does not have is a value error naming it. */
/* The figures' and prints' title says which heads are switched off:
 * "name with 1.2, 2.1 ablated" (or "mean-ablated"), cut to the title's size. */
void model_title_ablation(ModelOpened *g, const Options *o)
{
    if (!o->n_ablate || !g->im)
        return;
    char *t = g->im->title;
    size_t n = sizeof g->im->title, k = strlen(t);
    k += (size_t)snprintf(t + k, n - k, " with");
    for (int i = 0; i < o->n_ablate && k < n; i++)
        k += (size_t)snprintf(t + k, n - k, "%s %d.%d", i ? "," : "", o->ablate_layer[i] + 1,
                              o->ablate_head[i] + 1);
    if (k < n)
        snprintf(t + k, n - k, " %s", o->ablate_mean ? "mean-ablated" : "ablated");
}

int model_apply_ablation(ModelOpened *g, const Options *o, AttnErr *err)
{
    lm_ablate_mode(&g->lm, o->ablate_mean);
    for (int k = 0; k < o->n_ablate; k++) {
        int l = o->ablate_layer[k], h = o->ablate_head[k];
        if (l >= g->lm.info.n_layer)
            return attn_err_set(err, ATTN_E_RANGE, g->path, 0,
                                "--ablate %d.%d: there is no layer %d (the model has layers 1 to %d)",
                                l + 1, h + 1, l + 1, g->lm.info.n_layer);
        if (h >= g->lm.info.n_head)
            return attn_err_set(err, ATTN_E_RANGE, g->path, 0,
                                "--ablate %d.%d: there is no head %d (the model has heads 1 to %d)",
                                l + 1, h + 1, h + 1, g->lm.info.n_head);
        if (lm_ablate(&g->lm, l, h, 1, err) < 0)
            return -err->code;
    }
    return 0;
}

/* --generate N: text's tokens continued by N (greedy or sampled as the
 * flags say); T + N may be the model's positions, not more. The maps of
 * the whole are computed when a --print or --export needs them (not for
 * the continuation alone or its tokens). */
static int cli_generate(ModelOpened *g, const Options *o, const char *text, AttnErr *err)
{
    if (g->lm.info.masked_lm) /* its logits at a position are what fills it, not what follows */
        return attn_err_set(err, ATTN_E_UNSUPPORTED, g->path, 0,
                            "--generate: %s (%s) is an encoder: it fills a blank (%s in the text, "
                            "--print predictions), it does not continue a text", g->name,
                            g->lm.info.arch, model_mask_id(g->bpe) >= 0 ? "its mask token" : "a mask token");
    int rc = model_opened_set_text(g, text, strlen(text), err);
    if (rc == 0)
        rc = model_check_ids(g, text, strlen(text), err);
    if (rc < 0)
        return rc;
    int T = g->ids.n, P = g->lm.info.n_positions;
    if (o->generate > P - T)
        return attn_err_set(err, ATTN_E_RANGE, g->path, 0,
                            "--generate %s: the text's %d tokens and %s more are more than %s's %d positions "
                            "(n_positions): at most --generate %d", o->generate_arg, T, o->generate_arg, g->name, P,
                            P - T);
    GenSettings s = {o->sample, o->sample && o->temp_set ? o->cfg.temperature : 1.0, o->top_k};
    Prng r;
    prng_seed(&r, o->has_seed ? o->seed : 0);
    if ((rc = model_generate(g, o->generate, &s, &r, err)) < 0 || (rc = model_generated_join(g, text, err)) < 0)
        return rc;
    if (o->print == PRINT_TOKENS || !(o->print != PRINT_NONE || o->n_exports || o->export_attention))
        return 0;
    return model_compute_ids(g, err);
}

int lmsrc_cli_open(const Options *o, const char *path, void **opened, AttnErr *err)
{
    ModelOpened *g;
    *opened = NULL;
    int rc = model_open_path(path, o->prepend_bos, &g, err);
    if (rc == 0)
        rc = model_apply_ablation(g, o, err);
    if (rc < 0) {
        model_opened_free(g);
        return rc;
    }
    const char *text = o->sentence ? o->sentence : "";
    int window = !options_headless(o);
    if (o->target && !g->lm.info.encdec) {
        rc = attn_err_set(err, ATTN_E_USAGE, path, 0,
                          "--target: %s (%s) is not an encoder-decoder (T5, BART): its text is all "
                          "it reads", g->name, g->lm.info.arch);
        model_opened_free(g);
        return rc;
    }
    if (g->lm.info.encdec && (o->generate_set || o->print == PRINT_LOGIT_LENS)) {
        rc = attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0,
                          "%s: %s (%s) is an encoder-decoder: its %s is not computed yet", o->generate_set
                          ? "--generate" : "--print logit-lens", g->name, g->lm.info.arch,
                          o->generate_set ? "generation (--target gives a target)" : "logit lens");
        model_opened_free(g);
        return rc;
    }
    if (g->lm.info.encdec && !window && o->print != PRINT_TOKENS) {
        rc = model_encdec_compute(g, text, o->target, o->group, err);
        model_encdec_note(o, rc);
        if (rc == 0 && o->query >= g->im->f.Tq)
            rc = attn_err_set(err, ATTN_E_RANGE, path, 0, "--query %d: the %s has %d tokens", o->query + 1,
                              o->group == GROUP_ENCODER ? "source" : "target", g->im->f.Tq);
        else if (rc == 0 && import_pick(g->im, o->layer, o->head, o->rollout, o->drop, err) < 0)
            rc = -err->code;
        if (rc < 0) {
            model_opened_free(g);
            return rc;
        }
        *opened = g;
        return 0;
    }
    g->for_window = window;
    g->want_norms = o->matrix == MODEL_NORMS;
    if (o->matrix_set && (o->matrix == MODEL_SCORES || o->matrix == MODEL_LOGITS)) {
        rc = attn_err_set(err, ATTN_E_RANGE, path, 0,
                          "--matrix %s: a model's maps here are its weights and norms (--matrix norms); "
                          "scores and logits are the sentence model's", o->matrix == MODEL_SCORES ? "scores" : "logits");
        model_opened_free(g);
        return rc;
    }
    char *made = NULL;
    if (window && !o->sentence) { /* the window opens on the default sentence, or on the */
        BpeIds ids = {0};        /* model's first tokens when it has none of its words */
        text = "The train left the station on time";
        if (bpe_encode(g->bpe, text, strlen(text), &ids) == 0 && ids.n == 0) {
            int first[6], n = bpe_n_vocab(g->bpe) < 6 ? bpe_n_vocab(g->bpe) : 6;
            size_t len;
            for (int i = 0; i < n; i++)
                first[i] = i;
            if (bpe_decode(g->bpe, first, n, 1, &made, &len) == 0)
                text = made;
        }
        bpe_ids_free(&ids);
    }
    if (o->generate_set) {
        rc = cli_generate(g, o, text, err);
    } else if (o->print == PRINT_TOKENS) { /* tokens alone: any length, an empty text prints nothing */
        free(g->text);
        g->text = strdup(text);
        rc = g->text ? model_encode(g, text, strlen(text), &g->ids, err)
                     : attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
        g->n_given = g->ids.n;
    } else {
        rc = model_compute_text(g, text, strlen(text), err);
    }
    char left[1000];
    BpeIds given = {g->ids.id, g->n_given, g->ids.cap}; /* the text's, not those generated */
    if (rc == 0 && model_left_out_say(g, text, strlen(text), &given, left, sizeof left) > 0)
        fprintf(stderr, "attnviz: warning: %s\n", left);
    free(made);
    if (rc == 0 && !window) /* the window's title says it for the heads switched off there */
        model_title_ablation(g, o);
    if (rc == 0 && g->im) {
        int T = g->im->f.Tq;
        g->im->matrix = g->want_norms ? MODEL_NORMS : 0;
        if (o->query >= T)
            rc = attn_err_set(err, ATTN_E_RANGE, path, 0, "--query %d: the text has %d tokens", o->query + 1, T);
        else if (import_pick(g->im, o->layer, o->head, o->rollout, o->drop, err) < 0)
            rc = -err->code;
    }
    if (rc < 0) {
        model_opened_free(g);
        return rc;
    }
    *opened = g;
    return 0;
}

/* --export-attention's source of maps: the Imported's, made when asked. */
static int export_map(void *user, int l, int h, float *out)
{
    return attn_file_map(user, ATTN_PICK_HEAD, l, h, out);
}

/* --generate alone: the continuation as the tokenizer's decoder joins it,
 * then a newline. */
static int print_continuation(const ModelOpened *g, AttnErr *err)
{
    char *t = NULL;
    size_t n = 0;
    if (model_generated_text(g, &t, &n) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
    fwrite(t, 1, n, stdout);
    fputc('\n', stdout);
    free(t);
    return ferror(stdout) ? attn_err_set(err, ATTN_E_IO, "stdout", 0, "write failed") : 0;
}

int lmsrc_cli_write(void *opened, const Options *o, AttnErr *err)
{
    ModelOpened *g = opened;
    if (o->print == PRINT_TOKENS) /* generated ones marked g */
        return bpe_print_tokens_marked(stdout, g->bpe, g->ids.id, g->ids.n, o->generate_set ? g->n_given : g->ids.n) < 0
                   ? attn_err_set(err, ATTN_E_IO, "stdout", 0, "write failed")
                   : 0;
    if (o->generate_set && o->print == PRINT_NONE && !o->n_exports && !o->export_attention)
        return print_continuation(g, err);
    if (o->print == PRINT_PREDICTIONS || o->print == PRINT_LOGIT_LENS) {
        /* without --query: what comes after the text, or what fills an
           encoder's first blank (its mask token) */
        int blank = model_mask_pos(g, g->ids.id, g->ids.n);
        int pos = o->query >= 0 ? o->query : blank >= 0 ? blank : g->ids.n - 1;
        if (g->lm.info.encdec) /* the next token after the decoder's last position */
            pos = o->query >= 0 ? o->query : g->tgt.n - 1;
        int rc = o->print == PRINT_PREDICTIONS ? model_print_predictions(stdout, g, pos, err)
                                               : model_print_logit_lens(stdout, g, pos, err);
        if (rc < 0 || (!o->n_exports && !o->export_attention))
            return rc;
    }
    if (o->export_attention && g->lm.info.encdec) {
        int rc = model_encdec_export(g, o->export_attention, err);
        if (rc < 0 || (o->print == PRINT_NONE && !o->n_exports))
            return rc;
    } else if (o->export_attention) {
        int T = g->im->f.Tq, L = g->im->f.L, H = g->im->f.H;
        /* written map by map as they are made: no L × H × T × T array */
        /* the maps --matrix picks: the weights, or the norms */
        int rc = attn_write_attention_maps(o->export_attention, export_map, (void *)import_shown_file(g->im), L, H, T, T,
                                           (const char *const *)g->im->f.q_tokens, err);
        if (rc < 0 || (o->print == PRINT_NONE && !o->n_exports))
            return rc;
    }
    g->im->ids = g->ids.id; /* tokens the same when their ids are */
    g->im->text = g->text; /* the figures' title quotes it */
    Options rest = *o;
    if (rest.print == PRINT_PREDICTIONS || rest.print == PRINT_LOGIT_LENS)
        rest.print = PRINT_NONE;
    return import_write(g->im, &rest, err);
}

void lmsrc_cli_free(void *opened)
{
    model_opened_free(opened);
}

