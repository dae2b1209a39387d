/* Attention files in the application (see import.h): open one with its
 * tokens, pick a map from it (layer and head, averages, rollout, dropped
 * tokens), name it, and the command line's print and export of it. */
#include "attnviz/import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnio.h"

static void free_names(char **t, int n)
{
    for (int i = 0; t && i < n; i++)
        free(t[i]);
    free(t);
}

void import_close(Imported *im)
{
    if (im->k_shown != im->q_shown)
        free_names(im->k_shown, im->f.Tk);
    free_names(im->q_shown, im->f.Tq);
    if (im->k_name != im->q_name)
        free_names(im->k_name, im->f.Tk);
    free_names(im->q_name, im->f.Tq);
    free(im->v);
    free(im->mask);
    free(im->windows);
    free(im->q_lab);
    free(im->k_lab);
    free(im->q_tok);
    free(im->k_tok);
    free(im->q_special);
    free(im->k_special);
    free(im->q_drop);
    free(im->k_drop);
    free(im->pre_thumbs);
    free(im->pre_scores);
    attn_file_close(&im->nf);
    attn_file_close(&im->f);
    attn_file_close(&im->sf);
    memset(im, 0, sizeof *im);
}

/* n labels: the tokens as stored (shown = 0) or as shown, or positions. */
static char **names(char **tokens, int n, int shown)
{
    char **out = calloc((size_t)n + 1, sizeof *out);
    for (int i = 0; out && i < n; i++) {
        char buf[256];
        const char *t = tokens ? (shown ? attn_token_shown(tokens[i], buf, sizeof buf) : tokens[i]) : NULL;
        if (!t)
            snprintf(buf, sizeof buf, "%d", i);
        if (!(out[i] = strdup(t ? t : buf))) {
            free_names(out, i);
            return NULL;
        }
    }
    return out;
}

static int load_tokens(Imported *im, const char *tokens, const char *key_tokens, AttnErr *err)
{
    char **q = NULL, **k = NULL;
    int nq = 0, nk = 0;
    if (!tokens)
        return 0;
    if (attn_tokens_load(&q, &nq, tokens, err) < 0)
        return -err->code;
    if (key_tokens && attn_tokens_load(&k, &nk, key_tokens, err) < 0) {
        attn_tokens_free(q);
        return -err->code;
    }
    int rc = attn_file_set_tokens(&im->f, q, nq, k, nk, err);
    if (rc < 0) { /* name the token list too */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        attn_err_set(err, -rc, key_tokens && nk != im->f.Tk ? key_tokens : tokens, 0, "%s", msg);
    }
    return rc;
}

/* The tokens' names as shown and as stored, the title (path's last part),
 * the special tokens; im is closed on error. */
static int finish(Imported *im, const char *path, AttnErr *err)
{
    AttnFile *f = &im->f;
    im->q_shown = names(f->q_tokens, f->Tq, 1);
    im->q_name = names(f->q_tokens, f->Tq, 0);
    int same = !f->cross && f->k_tokens == f->q_tokens && f->Tq == f->Tk;
    im->k_shown = same ? im->q_shown : names(f->k_tokens, f->Tk, 1);
    im->k_name = same ? im->q_name : names(f->k_tokens, f->Tk, 0);
    const char *slash = strrchr(path, '/');
    snprintf(im->title, sizeof im->title, "%s", slash ? slash + 1 : path);
    for (int pass = 0; pass < 2 && im->q_name && im->k_name; pass++) /* the special tokens' names */
        for (int i = 0; i < (pass ? f->Tk : f->Tq); i++) {
            const char *t = pass ? im->k_name[i] : im->q_name[i];
            size_t n = strlen(im->specials);
            if (attn_token_special(t) && !strstr(im->specials, t) && n + strlen(t) + 2 < sizeof im->specials) {
                snprintf(im->specials + n, sizeof im->specials - n, "%s%s", n ? "," : "", t);
                im->n_special++;
            }
        }
    if (!im->q_shown || !im->q_name || !im->k_shown || !im->k_name) {
        import_close(im);
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    }
    return 0;
}

/* im's file of L × H maps Tq × Tk, tokens and name, its numbers not yet said. */
static void file_of(Imported *im, const char *name, int L, int H, int Tq, int Tk, char **q_tokens,
                    char **k_tokens)
{
    memset(im, 0, sizeof *im);
    AttnFile *f = &im->f;
    f->L = L;
    f->H = H;
    f->Tq = Tq;
    f->Tk = Tk;
    f->q_tokens = q_tokens;
    f->k_tokens = k_tokens ? k_tokens : q_tokens;
    f->cross = Tq != Tk || (k_tokens && k_tokens != q_tokens);
    snprintf(f->name, sizeof f->name, "%s", name);
}

int import_from_buffer(Imported *im, const char *name, float *v, int L, int H, int Tq, int Tk, char **q_tokens,
                       char **k_tokens, AttnErr *err)
{
    file_of(im, name, L, H, Tq, Tk, q_tokens, k_tokens);
    AttnFile *f = &im->f;
    f->n_parts = 1;
    f->parts[0] = (AttnPart){v, ATTN_DT_F32, 0, 0, L, H, Tq, Tk};
    f->buf = v;
    f->buf_len = sizeof(float) * (size_t)L * H * Tq * Tk;
    int pos[4];
    if (attn_file_find_nan(f, pos)) {
        import_close(im);
        return attn_err_set(err, ATTN_E_NONFINITE, name, 0, "NaN at layer %d, head %d, row %d, column %d (1-based)",
                            pos[0] + 1, pos[1] + 1, pos[2] + 1, pos[3] + 1);
    }
    return finish(im, name, err);
}

int import_from_maps(Imported *im, const char *name, const ImportMaps *maps, int L, int H, int Tq, int Tk,
                     char **q_tokens, char **k_tokens, AttnErr *err)
{
    file_of(im, name, L, H, Tq, Tk, q_tokens, k_tokens);
    im->f.computed = maps->map;
    im->f.computed_each = maps->each;
    im->f.computed_user = maps->user;
    im->f.computed_free = maps->user_free;
    int pos[4];
    if (maps->may_nan && attn_file_find_nan(&im->f, pos)) {
        import_close(im);
        return attn_err_set(err, ATTN_E_NONFINITE, name, 0, "NaN at layer %d, head %d, row %d, column %d (1-based)",
                            pos[0] + 1, pos[1] + 1, pos[2] + 1, pos[3] + 1);
    }
    return finish(im, name, err);
}

void import_set_norms(Imported *im, const ImportMaps *maps)
{
    AttnFile *n = &im->nf;
    memset(n, 0, sizeof *n);
    n->L = im->f.L;
    n->H = im->f.H;
    n->Tq = im->f.Tq;
    n->Tk = im->f.Tk;
    n->cross = im->f.cross;
    n->computed = maps->map;
    n->computed_each = maps->each;
    n->computed_user = maps->user;
    snprintf(n->name, sizeof n->name, "%s", im->f.name);
    im->has_norms = 1;
}

const AttnFile *import_shown_file(const Imported *im)
{
    if (im->matrix == 3 && im->has_norms)
        return &im->nf;
    return im->matrix == 1 && im->has_scores ? &im->sf : &im->f;
}

int import_open(Imported *im, const char *path, const char *tokens, const char *key_tokens,
                AttnErr *err)
{
    return import_open_group(im, path, NULL, tokens, key_tokens, err);
}

int import_open_group(Imported *im, const char *path, const char *group, const char *tokens,
                      const char *key_tokens, AttnErr *err)
{
    memset(im, 0, sizeof *im);
    if (group && !(strlen(path) > 4 && strcmp(path + strlen(path) - 4, ".npz") == 0))
        return attn_err_set(err, ATTN_E_USAGE, path, 0,
                            "--group %s picks an encoder-decoder's maps in its .npz: this file "
                            "is not one", group);
    if (attn_file_open_tensor(&im->f, path, group ? group : "attention", err) < 0)
        return -err->code;
    int rc = load_tokens(im, tokens, key_tokens, err);
    int pos[4];
    if (rc == 0 && attn_file_find_nan(&im->f, pos))
        rc = attn_err_set(err, ATTN_E_NONFINITE, path, 0,
                          "NaN at layer %d, head %d, row %d, column %d (1-based)", pos[0] + 1,
                          pos[1] + 1, pos[2] + 1, pos[3] + 1);
    if (rc < 0) {
        import_close(im);
        return rc;
    }
    AttnFile *f = &im->f;
    /* scores of the same shape beside the attention (npz, safetensors) */
    AttnErr none = {0};
    const char *dot = strrchr(path, '.');
    if (dot && (strcmp(dot, ".npz") == 0 || strcmp(dot, ".safetensors") == 0) &&
        attn_file_open_tensor(&im->sf, path, "scores", &none) == 0) {
        im->has_scores = im->sf.L == f->L && im->sf.H == f->H && im->sf.Tq == f->Tq && im->sf.Tk == f->Tk &&
                         !attn_file_find_nan(&im->sf, pos);
        if (!im->has_scores)
            attn_file_close(&im->sf);
    }
    return finish(im, path, err);
}

/* Flags of the tokens named in drop ("a,b,c"), as stored or as shown. */
static int drop_flags(const char *drop, char **stored, char **shown, int n, unsigned char *flags)
{
    int hits = 0;
    memset(flags, 0, (size_t)n);
    const char *p = drop;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        for (int i = 0; i < n; i++)
            if ((strlen(stored[i]) == len && strncmp(stored[i], p, len) == 0) ||
                (strlen(shown[i]) == len && strncmp(shown[i], p, len) == 0)) {
                hits += !flags[i];
                flags[i] = 1;
            }
        p = comma ? comma + 1 : NULL;
    }
    return hits;
}

/* The facts line of the picked map. */
static void pick_facts(Imported *im, const char *dropped)
{
    const AttnFile *f = &im->f;
    char lb[64], hb[64];
    if (im->rollout)
        snprintf(lb, sizeof lb, "rollout through layer %d of %d", im->layer + 1, f->L);
    else if (im->layer < 0)
        snprintf(lb, sizeof lb, "average of %d layers", f->L);
    else
        snprintf(lb, sizeof lb, "layer %d of %d", im->layer + 1, f->L);
    if (im->rollout)
        snprintf(hb, sizeof hb, "heads averaged");
    else
        attn_head_label(im->head, f->H, hb, sizeof hb);
    snprintf(im->facts, sizeof im->facts,
             "%s \xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 %d\xC3\x97%d%s%s%s", lb, hb,
             attn_map_kind_name(im->kind), attn_dtype_name(f->computed ? ATTN_DT_F32 : f->parts[0].dtype), im->Tq, im->Tk,
             f->cross ? " cross-attention" : "", dropped && *dropped ? " \xC2\xB7 without " : "",
             dropped && *dropped ? dropped : "");
}

/* The sliding window that masks the picked map's keys j <= i - window (0:
 * none): its layer's; a mean over layers' only when every layer slides (the
 * widest); none once tokens are dropped (the positions moved). */
static int picked_window(const Imported *im)
{
    const AttnFile *f = &im->f;
    if (!im->windows || im->Tq != f->Tq || im->Tk != f->Tk || im->rollout)
        return 0;
    if (im->layer >= 0)
        return im->windows[im->layer];
    int w = im->windows[0];
    for (int l = 0; l < f->L && w; l++)
        w = im->windows[l] > w ? im->windows[l] : im->windows[l] ? w : 0;
    return w;
}

/* What the numbers are: −inf is a masked cell (and a key outside the
 * layer's sliding window); a negative value makes them scores (diverging
 * colours); rows of weights that do not sum to 1 are said in the note. */
static void classify(Imported *im)
{
    int Tq = im->Tq, Tk = im->Tk, negative = 0, bad_row = -1, win = picked_window(im);
    double bad_sum = 0;
    for (int i = 0; i < Tq; i++) {
        double sum = 0;
        for (int j = 0; j < Tk; j++) {
            float x = im->v[(size_t)i * Tk + j];
            im->mask[(size_t)i * Tk + j] = (isinf(x) && x < 0) || (win > 0 && j <= i - win);
            negative |= x < 0 && !isinf(x);
            sum += isfinite(x) ? x : 0;
        }
        if (bad_row < 0 && fabs(sum - 1.0) > 1e-3) {
            bad_row = i;
            bad_sum = sum;
        }
    }
    int norms = im->matrix == 3 && im->has_norms;
    im->kind = norms ? ATTN_MAP_NORMS : negative || im->matrix ? ATTN_MAP_SCORES : ATTN_MAP_WEIGHTS;
    im->note[0] = '\0';
    if (bad_row >= 0 && !im->matrix) /* scores and norms need not sum to 1 */
        snprintf(im->note, sizeof im->note,
                 "rows do not sum to 1 (row %d, \"%s\", sums to %.4g): values shown as they are",
                 bad_row + 1, im->q_lab[bad_row], bad_sum);
}

static int check_pick(const AttnFile *f, int layer, int head, int rollout, const char *name,
                      AttnErr *err)
{
    if (layer >= f->L)
        return attn_err_set(err, ATTN_E_RANGE, name, 0, "--layer %d is out of range: the file has %d layer%s",
                            layer + 1, f->L, f->L == 1 ? "" : "s");
    if (head >= f->H)
        return attn_err_set(err, ATTN_E_RANGE, name, 0, "--head %d is out of range: the file has %d head%s",
                            head + 1, f->H, f->H == 1 ? "" : "s");
    if (rollout && f->Tq != f->Tk)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                            "--rollout needs self-attention (square maps); this one is %d×%d",
                            f->Tq, f->Tk);
    return 0;
}

/* The labels of the rows and columns kept after the drop. */
static int keep_labels(Imported *im, const unsigned char *dq, const unsigned char *dk)
{
    const AttnFile *f = &im->f;
    free(im->q_lab), free(im->k_lab), free(im->q_tok), free(im->k_tok);
    free(im->q_special), free(im->k_special);
    im->q_lab = malloc(sizeof *im->q_lab * (size_t)(f->Tq + 1));
    im->q_tok = malloc(sizeof *im->q_tok * (size_t)(f->Tq + 1));
    im->k_lab = malloc(sizeof *im->k_lab * (size_t)(f->Tk + 1));
    im->k_tok = malloc(sizeof *im->k_tok * (size_t)(f->Tk + 1));
    im->q_special = calloc((size_t)f->Tq + 1, 1);
    im->k_special = calloc((size_t)f->Tk + 1, 1);
    if (!im->q_lab || !im->q_tok || !im->k_lab || !im->k_tok || !im->q_special || !im->k_special)
        return -1;
    int a = 0, b = 0;
    for (int i = 0; i < f->Tq; i++)
        if (!dq[i]) {
            im->q_special[a] = (unsigned char)attn_token_special(im->q_name[i]);
            im->q_lab[a] = im->q_shown[i];
            im->q_tok[a++] = im->q_name[i];
        }
    for (int j = 0; j < f->Tk; j++)
        if (!dk[j]) {
            im->k_special[b] = (unsigned char)attn_token_special(im->k_name[j]);
            im->k_lab[b] = im->k_shown[j];
            im->k_tok[b++] = im->k_name[j];
        }
    return 0;
}

int import_pick(Imported *im, int layer, int head, int rollout, const char *drop, AttnErr *err)
{
    const AttnFile *f = &im->f;
    if (rollout && layer < 0)
        layer = f->L - 1;
    int rc = check_pick(f, layer, head, rollout, im->title, err);
    if (rc < 0)
        return rc;
    AttnPick pick = rollout ? ATTN_PICK_ROLLOUT
                    : layer >= 0 ? (head >= 0 ? ATTN_PICK_HEAD : ATTN_PICK_LAYER_AVG)
                                 : (head >= 0 ? ATTN_PICK_HEAD_ALL_AVG : ATTN_PICK_ALL_AVG);
    size_t n = (size_t)f->Tq * f->Tk;
    float *v = malloc(n * sizeof *v);
    unsigned char *mask = malloc(n), *dq = calloc((size_t)f->Tq + 1, 1), *dk = calloc((size_t)f->Tk + 1, 1);
    const AttnFile *src = import_shown_file(im);
    rc = !v || !mask || !dq || !dk ? -ATTN_E_NOMEM : attn_file_map(src, pick, layer, head, v);
    if (rc < 0) {
        free(v), free(mask), free(dq), free(dk);
        return attn_err_set(err, -rc, im->title, 0, "cannot pick the map: %s", attn_strerror(rc));
    }
    int Tq = f->Tq, Tk = f->Tk;
    if (drop && (drop_flags(drop, im->q_name, im->q_shown, Tq, dq) +
                 drop_flags(drop, im->k_name, im->k_shown, Tk, dk)) == 0)
        rc = attn_err_set(err, ATTN_E_RANGE, im->title, 0, "--drop %s: no such token in the file", drop);
    if (rc == 0 && drop) { /* without --drop the values stay as they are */
        attn_map_drop(v, &Tq, &Tk, dq, dk);
        if (Tq == 0 || Tk == 0)
            rc = attn_err_set(err, ATTN_E_EMPTY, im->title, 0, "--drop %s leaves no tokens", drop);
    }
    if (rc == 0 && keep_labels(im, dq, dk) < 0)
        rc = attn_err_set(err, ATTN_E_NOMEM, im->title, 0, "out of memory");
    if (rc < 0) {
        free(v), free(mask), free(dq), free(dk);
        return rc;
    }
    free(im->v), free(im->mask), free(im->q_drop), free(im->k_drop);
    im->q_drop = dq;
    im->k_drop = dk;
    im->v = v;
    im->mask = mask;
    im->Tq = Tq;
    im->Tk = Tk;
    im->layer = layer;
    im->head = rollout ? ATTN_MAP_AVG : head;
    im->rollout = rollout;
    classify(im);
    pick_facts(im, drop);
    return 0;
}

AttnMap import_map(const Imported *im, int shown)
{
    AttnMap m = attn_map_make(im->v, im->Tq, im->Tk, shown ? im->q_lab : im->q_tok,
                              shown ? im->k_lab : im->k_tok, im->kind);
    m.mask = im->mask;
    m.causal = im->causal && im->Tq == im->Tk;
    m.layer = im->layer;
    m.head = im->head;
    m.n_layers = im->f.L;
    m.n_heads = im->f.H;
    return m;
}

void import_thumb_size(int Tq, int Tk, int side, int *tq, int *tk)
{
    int bq = (Tq + side - 1) / side, bk = (Tk + side - 1) / side;
    *tq = (Tq + bq - 1) / bq;
    *tk = (Tk + bk - 1) / bk;
}

void import_thumb_map(const float *map, int Tq, int Tk, int side, float *t)
{
    int bq = (Tq + side - 1) / side, bk = (Tk + side - 1) / side, tq, tk;
    import_thumb_size(Tq, Tk, side, &tq, &tk);
    memset(t, 0, sizeof *t * (size_t)tq * tk);
    float inv = 1.0f / (float)(bq * bk);
    /* the mean of each block of bq × bk cells (±inf counts as 0) */
    for (int i = 0; i < Tq; i++) {
        const float *row = map + (size_t)i * Tk;
        float *trow = t + (size_t)(i / bq) * tk;
        for (int j = 0; j < Tk; j++)
            trow[j / bk] += fabsf(row[j]) <= 3.4e38f ? row[j] : 0.0f;
    }
    for (size_t k = 0; k < (size_t)tq * tk; k++)
        t[k] *= inv;
}

typedef struct ThumbJob {
    const AttnFile *f;
    int side;
    size_t small;
    float *out;
} ThumbJob;

static void thumb_one(void *user, int l, int h, const float *map)
{
    const ThumbJob *j = user;
    import_thumb_map(map, j->f->Tq, j->f->Tk, j->side, j->out + ((size_t)l * j->f->H + h) * j->small);
}

int import_thumbs(const Imported *im, int side, float **out, int *tq, int *tk, AttnErr *err)
{
    const AttnFile *f = import_shown_file(im) == &im->nf ? &im->nf : &im->f; /* not the scores */
    import_thumb_size(f->Tq, f->Tk, side, tq, tk);
    size_t small = (size_t)*tq * *tk;
    *out = malloc(sizeof **out * (size_t)f->L * f->H * small);
    if (*out && im->pre_thumbs && im->pre_side == side && im->pre_norms == (f == &im->nf)) { /* made where the maps were */
        memcpy(*out, im->pre_thumbs, sizeof **out * (size_t)f->L * f->H * small);
        return 0;
    }
    float *map = f->computed_each ? NULL : malloc(sizeof *map * (size_t)f->Tq * f->Tk);
    ThumbJob j = {f, side, small, *out};
    int rc = *out && (map || f->computed_each) ? 0 : -ATTN_E_NOMEM;
    if (rc == 0 && f->computed_each) /* every map made once, on the two threads */
        rc = f->computed_each(f->computed_user, thumb_one, &j);
    for (int l = 0; rc == 0 && map && l < f->L; l++)
        for (int h = 0; h < f->H; h++) {
            attn_file_map(f, ATTN_PICK_HEAD, l, h, map);
            thumb_one(&j, l, h, map);
        }
    free(map);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        return attn_err_set(err, ATTN_E_NOMEM, im->title, 0, "out of memory");
    }
    return 0;
}

/* The kept tokens' identities: ids, or the index of the first equal stored string. */
static int *kept_ids(const Imported *im)
{
    const AttnFile *f = &im->f;
    int *ids = malloc(sizeof *ids * (size_t)(f->Tq + 1)), n = 0;
    for (int i = 0; ids && i < f->Tq; i++) {
        if (im->q_drop && im->q_drop[i])
            continue;
        int id = i;
        if (im->ids)
            id = im->ids[i];
        else
            for (int k = 0; k < i; k++)
                if (strcmp(im->q_name[k], im->q_name[i]) == 0) {
                    id = k;
                    break;
                }
        ids[n++] = id;
    }
    return ids;
}

typedef struct ScoreJob {
    const Imported *im;
    const int *ids;
    HeadScores *out;
} ScoreJob;

static void score_one(void *user, int l, int h, const float *map)
{
    const ScoreJob *j = user;
    const AttnFile *f = &j->im->f; /* the norms' shape is the same */
    head_scores(map, f->Tq, f->Tk, j->ids, f->cross, &j->out[(size_t)l * f->H + h]);
}

int import_head_scores(const Imported *im, HeadScores *out, AttnErr *err)
{
    const AttnFile *f = import_shown_file(im) == &im->nf ? &im->nf : &im->f; /* not the scores */
    int *ids = kept_ids(im), rc = 0, dropped = 0;
    for (int i = 0; im->q_drop && i < f->Tq; i++)
        dropped |= im->q_drop[i];
    for (int j = 0; im->k_drop && j < f->Tk; j++)
        dropped |= im->k_drop[j];
    ScoreJob job = {im, ids, out};
    if (!dropped && im->pre_scores && im->pre_norms == (f == &im->nf)) {
        memcpy(out, im->pre_scores, sizeof *out * (size_t)f->L * f->H);
        free(ids);
        return 0;
    }
    if (ids && !dropped && f->computed_each) { /* every map made once, on the two threads */
        rc = f->computed_each(f->computed_user, score_one, &job);
        free(ids);
        return rc < 0 ? attn_err_set(err, ATTN_E_NOMEM, im->title, 0, "out of memory") : 0;
    }
    float *map = malloc(sizeof *map * (size_t)f->Tq * (size_t)f->Tk);
    if (!map || !ids)
        rc = attn_err_set(err, ATTN_E_NOMEM, im->title, 0, "out of memory");
    for (int l = 0; rc == 0 && l < f->L; l++)
        for (int h = 0; rc == 0 && h < f->H; h++) {
            int Tq = f->Tq, Tk = f->Tk;
            if ((rc = attn_file_map(f, ATTN_PICK_HEAD, l, h, map)) < 0) {
                rc = attn_err_set(err, -rc, im->title, 0, "cannot read layer %d head %d: %s", l + 1, h + 1,
                                  attn_strerror(rc));
                break;
            }
            if (dropped) /* without a drop the rows stay as they are */
                attn_map_drop(map, &Tq, &Tk, im->q_drop, im->k_drop);
            head_scores(map, Tq, Tk, ids, f->cross, &out[(size_t)l * f->H + h]);
        }
    free(map);
    free(ids);
    return rc;
}

int import_layer_heads(const Imported *im, int layer, float *out, AttnErr *err)
{
    const AttnFile *f = &im->f;
    size_t one = (size_t)f->Tq * f->Tk;
    float *map = malloc(sizeof *map * one);
    int rc = map ? 0 : attn_err_set(err, ATTN_E_NOMEM, im->title, 0, "out of memory");
    int dropped = 0;
    for (int i = 0; im->q_drop && i < f->Tq; i++)
        dropped |= im->q_drop[i];
    for (int j = 0; im->k_drop && j < f->Tk; j++)
        dropped |= im->k_drop[j];
    for (int h = 0; rc == 0 && h < f->H; h++) {
        int Tq = f->Tq, Tk = f->Tk;
        rc = attn_file_map(f, layer >= 0 ? ATTN_PICK_HEAD : ATTN_PICK_HEAD_ALL_AVG, layer, h, map);
        if (rc < 0) {
            rc = attn_err_set(err, -rc, im->title, 0, "cannot read head %d: %s", h + 1, attn_strerror(rc));
            break;
        }
        if (dropped)
            attn_map_drop(map, &Tq, &Tk, im->q_drop, im->k_drop);
        memcpy(out + (size_t)h * im->Tq * im->Tk, map, sizeof *map * (size_t)Tq * Tk);
    }
    free(map);
    return rc;
}
