/* gguf_vocab.c's ids for texts, for run.sh (developers only, not `make`):
 *   ids VOCAB.json TEXTS > OUT.tsv
 * VOCAB.json is dump.py's dump of a GGUF file's tokenizer arrays; TEXTS one
 * text a line, "x" then its bytes in hex. Each line of OUT: the ids of
 * bpe_encode_template, then bpe_decode(ids, 0) and bpe_decode(ids, 1) in hex,
 * as ref.mjs writes llama.cpp's. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz/gguf_vocab.h"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    *n = b ? fread(b, 1, (size_t)len, f) : 0;
    if (b)
        b[*n] = '\0';
    fclose(f);
    return b;
}

static int num(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(x) ? x->valueint : -1;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItem(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void put_hex(const char *s, size_t n)
{
    putchar('\t');
    for (size_t i = 0; i < n; i++)
        printf("%02x", (unsigned char)s[i]);
}

int main(int argc, char **argv)
{
    size_t n;
    char *json = argc == 3 ? slurp(argv[1], &n) : NULL;
    cJSON *r = json ? cJSON_Parse(json) : NULL;
    if (!r) {
        fprintf(stderr, "usage: ids VOCAB.json TEXTS (a readable dump.py file)\n");
        return 2;
    }
    cJSON *tok = cJSON_GetObjectItem(r, "tokens"), *sc = cJSON_GetObjectItem(r, "scores");
    cJSON *ty = cJSON_GetObjectItem(r, "types"), *mg = cJSON_GetObjectItem(r, "merges"), *e;
    int nt = cJSON_GetArraySize(tok), nm = cJSON_IsArray(mg) ? cJSON_GetArraySize(mg) : 0, i;
    const char **tk = calloc((size_t)nt, sizeof *tk), **m = calloc((size_t)nm + 1, sizeof *m);
    size_t *tl = calloc((size_t)nt, sizeof *tl), *ml = calloc((size_t)nm + 1, sizeof *ml);
    int32_t *tp = calloc((size_t)nt, sizeof *tp);
    float *s = cJSON_IsArray(sc) ? calloc((size_t)nt, sizeof *s) : NULL;
    i = 0;
    cJSON_ArrayForEach(e, tok) {
        tk[i] = e->valuestring;
        tl[i++] = strlen(e->valuestring);
    }
    i = 0;
    if (cJSON_IsArray(ty))
        cJSON_ArrayForEach(e, ty) tp[i++] = e->valueint;
    i = 0;
    if (s)
        cJSON_ArrayForEach(e, sc) s[i++] = (float)e->valuedouble;
    i = 0;
    if (nm)
        cJSON_ArrayForEach(e, mg) {
            m[i] = e->valuestring;
            ml[i++] = strlen(e->valuestring);
        }
    GgufVocab v = {.model = str(r, "model"), .pre = str(r, "pre"), .n_tokens = nt, .tokens = tk,
                   .token_lens = tl, .scores = s, .types = cJSON_IsArray(ty) ? tp : NULL,
                   .n_merges = nm, .merges = m, .merge_lens = ml, .bos_id = num(r, "bos"),
                   .eos_id = num(r, "eos"), .unk_id = num(r, "unk"), .pad_id = num(r, "pad"),
                   .add_bos = num(r, "add_bos"), .add_eos = num(r, "add_eos"),
                   .add_space_prefix = num(r, "add_space_prefix"), .name = str(r, "name")};
    Bpe *b = NULL;
    AttnErr err = {0};
    clock_t c0 = clock();
    if (gguf_vocab_build(&b, &v, &err) < 0) {
        fprintf(stderr, "%s: %s\n", argv[1], err.msg);
        return 1;
    }
    fprintf(stderr, "%s: built in %.0f ms\n", argv[1], (double)(clock() - c0) * 1000.0 / CLOCKS_PER_SEC);
    size_t ln;
    char *texts = slurp(argv[2], &ln), *save = NULL;
    double encoding = 0;
    for (char *line = strtok_r(texts, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        size_t hl = strlen(++line), k = 0;
        char *txt = malloc(hl / 2 + 1);
        for (size_t j = 0; j + 1 < hl; j += 2) {
            unsigned x;
            sscanf(line + j, "%2x", &x);
            txt[k++] = (char)x;
        }
        BpeIds ids = {0};
        clock_t c1 = clock();
        bpe_encode_template(b, txt, k, &ids);
        encoding += (double)(clock() - c1) * 1000.0 / CLOCKS_PER_SEC;
        for (int j = 0; j < ids.n; j++)
            printf("%s%d", j ? " " : "", ids.id[j]);
        for (int skip = 0; skip < 2; skip++) {
            char *d;
            size_t dn;
            bpe_decode(b, ids.id, ids.n, skip, &d, &dn);
            put_hex(d, dn);
            free(d);
        }
        putchar('\n');
        bpe_ids_free(&ids);
        free(txt);
    }
    fprintf(stderr, "%s: encoding took %.1f ms\n", argv[1], encoding);
    bpe_destroy(b);
    return 0;
}
