/* Attention maps as text (an aligned table) and CSV, and a model's whole
 * computation as JSON. Numbers are printed with %.9g so a float
 * round-trips; the maps' printers know nothing of a Model. */
#include "attnviz/io.h"

#include <math.h>
#include <string.h>

/* Display width of a UTF-8 string (code points; good enough for a table). */
static int width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void pad(FILE *f, const char *s, int w, int right)
{
    int n = w - width(s);
    if (right)
        for (int i = 0; i < n; i++)
            fputc(' ', f);
    fputs(s, f);
    if (!right)
        for (int i = 0; i < n; i++)
            fputc(' ', f);
}

int print_map_text(FILE *f, const AttnMap *map, const char *title)
{
    int Tq = map->Tq, Tk = map->Tk;
    fprintf(f, "%s\n", title);
    fprintf(f, "rows: queries, columns: keys%s\n\n",
            map->kind == ATTN_MAP_WEIGHTS ? "; each row sums to 1" : "");
    int lw = 5, cw = 6;
    for (int i = 0; i < Tq; i++)
        lw = width(map->q_labels[i]) > lw ? width(map->q_labels[i]) : lw;
    for (int j = 0; j < Tk; j++)
        cw = width(map->k_labels[j]) + 1 > cw ? width(map->k_labels[j]) + 1 : cw;
    if (cw > 12)
        cw = 12;
    pad(f, "", lw, 0);
    for (int j = 0; j < Tk; j++) {
        char cut[64];
        const char *t = map->k_labels[j];
        if (width(t) > cw - 1) {
            /* shorten long keys, never cutting a character */
            size_t b = 0;
            int w = 0;
            while (t[b] && w < cw - 2 && b < sizeof cut - 8) {
                b++;
                while (((unsigned char)t[b] & 0xC0) == 0x80)
                    b++;
                w++;
            }
            snprintf(cut, sizeof cut, "%.*s~", (int)b, t);
            t = cut;
        }
        pad(f, t, cw, 1);
    }
    fputc('\n', f);
    for (int i = 0; i < Tq; i++) {
        pad(f, map->q_labels[i], lw, 0);
        for (int j = 0; j < Tk; j++) {
            char v[32];
            if (attn_map_masked(map, i, j))
                snprintf(v, sizeof v, "-");
            else
                snprintf(v, sizeof v, "%.3f", (double)attn_map_at(map, i, j));
            pad(f, v, cw, 1);
        }
        fputc('\n', f);
    }
    return ferror(f) ? -ATTN_E_IO : 0;
}

int print_text(FILE *f, const Model *m, ModelMatrix which, int head)
{
    char facts[256], title[300];
    AttnMap map = model_map(m, which, head);
    if (!map.v) /* a matrix the model does not keep: its weights */
        map = model_map(m, MODEL_WEIGHTS, head);
    model_facts(m, head, 1, facts, sizeof facts);
    snprintf(title, sizeof title, "attention %s (%s)", attn_map_kind_name(map.kind), facts);
    int rc = print_map_text(f, &map, title);
    int n_oov = model_count_oov(m), k_oov = 0;
    if (n_oov) {
        fprintf(f, "\nnot in the embedding table (hashed vectors):");
        for (int i = 0; i < m->T; i++)
            if (m->oov[i])
                fprintf(f, " %s", tok_text(&m->toks, i));
        fputc('\n', f);
    }
    for (int j = 0; m->cross && j < m->Tk; j++)
        k_oov += m->koov[j] != 0;
    if (k_oov) {
        fprintf(f, "%skeys not in the embedding table (hashed vectors):", n_oov ? "" : "\n");
        for (int j = 0; j < m->Tk; j++)
            if (m->koov[j])
                fprintf(f, " %s", m->klabels[j]);
        fputc('\n', f);
    }
    return rc < 0 || ferror(f) ? -ATTN_E_IO : 0;
}

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int print_map_csv(FILE *f, const AttnMap *map)
{
    fputs("query", f);
    for (int j = 0; j < map->Tk; j++) {
        fputc(',', f);
        csv_field(f, map->k_labels[j]);
    }
    fputc('\n', f);
    for (int i = 0; i < map->Tq; i++) {
        csv_field(f, map->q_labels[i]);
        for (int j = 0; j < map->Tk; j++)
            fprintf(f, ",%.9g", (double)attn_map_at(map, i, j));
        fputc('\n', f);
    }
    return ferror(f) ? -ATTN_E_IO : 0;
}

int print_csv(FILE *f, const Model *m, ModelMatrix which, int head)
{
    AttnMap map = model_map(m, which, head);
    if (!map.v) /* a matrix the model does not keep: its weights */
        map = model_map(m, MODEL_WEIGHTS, head);
    return print_map_csv(f, &map);
}

void io_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, float v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", (double)v);
    else
        fputs("null", f);
}

/* A rows×cols matrix with row stride ld, as nested arrays. */
static void json_matrix(FILE *f, const float *a, int rows, int cols, int ld)
{
    fputc('[', f);
    for (int i = 0; i < rows; i++) {
        fputs(i ? ", [" : "[", f);
        for (int j = 0; j < cols; j++) {
            if (j)
                fputs(", ", f);
            json_number(f, a[(size_t)i * ld + j]);
        }
        fputc(']', f);
    }
    fputc(']', f);
}

/* One head's T-row matrix as `,\n   "name": [[...]]`, or [] with no tokens. */
static void json_field(FILE *f, const char *name, const float *a, int rows, int cols)
{
    fprintf(f, ",\n   \"%s\": ", name);
    if (rows)
        json_matrix(f, a, rows, cols, cols);
    else
        fputs("[]", f);
}

/* A list of n floats as a JSON array. */
static void json_vector(FILE *f, const float *a, int n)
{
    fputc('[', f);
    for (int j = 0; j < n; j++) {
        if (j)
            fputs(", ", f);
        json_number(f, a[j]);
    }
    fputc(']', f);
}

/* "tokens" and "oov" of one sentence's n labels, e.g. key_tokens, key_oov */
static void json_tokens(FILE *f, const char *tok_name, const char *oov_name,
                        const char *const *labels, const unsigned char *oov, int n)
{
    fprintf(f, "\"%s\": [", tok_name);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        io_json_string(f, labels[i]);
    }
    fprintf(f, "], \"%s\": [", oov_name);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? ", " : "", oov[i] ? "true" : "false");
    fputc(']', f);
}

static void json_config(FILE *f, const Model *m, int h, int dk)
{
    const AttnConfig *c = &m->cfg;
    fprintf(f, ",\n \"config\": {\"mode\": \"%s\", \"heads\": %d, \"d_model\": %d, "
               "\"d_k\": %d, \"scale\": %s, \"causal\": %s, \"posenc\": %s, "
               "\"temperature\": %.9g, \"score\": \"%s\", \"seed\": ",
            c->mode == ATTN_MODE_LEARNED ? "learned" : "basic", h, m->d, dk,
            c->scale ? "true" : "false", model_causal(m) ? "true" : "false",
            c->posenc ? "true" : "false", (double)c->temperature, attn_score_name(c->score));
    if (m->has_seed)
        fprintf(f, "%llu", (unsigned long long)m->seed);
    else
        fputs("null", f);
    fputs(", \"dims\": [", f);
    for (int k = 0; k < m->d; k++) {
        if (k)
            fputs(", ", f);
        io_json_string(f, embed_dim_name(m->table, k));
    }
    fputs("]}", f);
}

/* Head k: its weights (null in basic mode), its additive vector v (dk
 * numbers; basic mode's one head: vb, d numbers), then Q (Tq × dk), K and
 * V (Tk × dk), scores and weights (Tq × Tk), Z (Tq × dk). */
static void json_head(FILE *f, const Model *m, int k, int dk, int Tq, int Tk)
{
    const AttnResult *r = &m->res;
    int d = m->d, learned = m->cfg.mode == ATTN_MODE_LEARNED;
    size_t slice = (size_t)d * dk;
    static const char *const wn[3] = {"Wq", "Wk", "Wv"};
    const float *W[3] = {m->params.Wq, m->params.Wk, m->params.Wv};
    for (int w = 0; w < 3; w++) {
        fprintf(f, "%s\"%s\": ", w ? ", " : "", wn[w]);
        if (learned)
            json_matrix(f, W[w] + k * slice, d, dk, dk);
        else
            fputs("null", f);
    }
    fputs(", \"v\": ", f);
    if (learned)
        json_vector(f, m->params.v + (size_t)k * dk, dk);
    else
        json_vector(f, m->params.vb, d);
    size_t qo = (size_t)k * Tq * dk, ko = (size_t)k * Tk * dk, mo = (size_t)k * Tq * Tk;
    json_field(f, "Q", r->Q + qo, Tq, dk);
    json_field(f, "K", r->K + ko, Tk, dk);
    json_field(f, "V", r->V + ko, Tk, dk);
    json_field(f, "scores", r->scores + mo, Tq, Tk);
    json_field(f, "weights", r->weights + mo, Tq, Tk);
    json_field(f, "Z", r->Z + qo, Tq, dk);
}

int print_json_member(FILE *f, const Model *m, const char *name, const char *value_json)
{
    const AttnResult *r = &m->res;
    int T = m->T, d = m->d, learned = m->cfg.mode == ATTN_MODE_LEARNED;
    int h = learned ? m->params.h : 1, dk = d / h;
    /* the computed sizes (Tq × Tk); none when the text changed since */
    int fresh = r->Tq == T && r->Tk == m->Tk;
    int Tq = fresh ? T : 0, Tk = fresh ? m->Tk : 0;
    fputc('{', f);
    json_tokens(f, "tokens", "oov", m->labels, m->oov, T);
    if (m->cross) {
        fputs(",\n ", f);
        json_tokens(f, "key_tokens", "key_oov", m->klabels, m->koov, m->Tk);
    }
    json_config(f, m, h, dk);
    fputs(",\n \"X\": ", f);
    json_matrix(f, m->X, T, d, d);
    if (m->cross) {
        fputs(",\n \"X_keys\": ", f);
        json_matrix(f, m->Xk, m->Tk, d, d);
    }
    fputs(",\n \"heads\": [", f);
    for (int k = 0; k < h; k++) {
        fputs(k ? ",\n  {" : "\n  {", f);
        json_head(f, m, k, dk, Tq, Tk);
        fputc('}', f);
    }
    fputs("],\n \"Wo\": ", f);
    if (learned)
        json_matrix(f, m->params.Wo, d, d, d);
    else
        fputs("null", f);
    fputs(",\n \"output\": ", f);
    if (Tq)
        json_matrix(f, r->output, Tq, d, d);
    else
        fputs("[]", f);
    if (value_json)
        fprintf(f, ",\n \"%s\": %s", name, value_json);
    fputs("}\n", f);
    return ferror(f) ? -ATTN_E_IO : 0;
}

int print_json(FILE *f, const Model *m, const char *session_json)
{
    return print_json_member(f, m, "session", session_json);
}

int print_map_json(FILE *f, const AttnMap *map, const char *fields)
{
    fputs("{", f);
    if (fields && *fields)
        fprintf(f, "%s,\n ", fields);
    fprintf(f, "\"kind\": \"%s\",\n \"query_tokens\": [", attn_map_kind_name(map->kind));
    for (int i = 0; i < map->Tq; i++) {
        fputs(i ? ", " : "", f);
        io_json_string(f, map->q_labels[i]);
    }
    fputs("],\n \"key_tokens\": [", f);
    for (int j = 0; j < map->Tk; j++) {
        fputs(j ? ", " : "", f);
        io_json_string(f, map->k_labels[j]);
    }
    fputs("],\n \"values\": ", f);
    if (map->Tq && map->Tk)
        json_matrix(f, map->v, map->Tq, map->Tk, map->stride);
    else
        fputs("[]", f);
    fputs("}\n", f);
    return ferror(f) ? -ATTN_E_IO : 0;
}
