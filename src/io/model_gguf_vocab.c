/* A GGUF file's tokenizer (model_file.h's model_file_gguf_vocab): its
 * tokenizer.ggml.* keys read (gguf.c) into the plain arrays the core's
 * gguf_vocab_build takes. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/bpe.h"
#include "attnviz/gguf.h"
#include "attnviz/gguf_vocab.h"
#include "attnviz/model_file.h"
#include "model_file_internal.h"

int model_file_gguf_vocab(const ModelFile *m, Bpe **out, AttnErr *err)
{
    const Gguf *g = m->own->gguf;
    const char *path = m->dir;
    GgufVocab v = {.bos_id = -1, .eos_id = -1, .unk_id = -1, .pad_id = -1, .add_bos = -1,
                   .add_eos = -1, .add_space_prefix = -1};
    GgufStr model = {0}, pre = {0};
    const GgufKV *tokens = NULL, *scores = NULL, *types = NULL, *merges = NULL;
    char model_s[32] = "", pre_s[64] = "";
    int rc = gguf_get_str(g, "tokenizer.ggml.model", &model, path, err);
    if (rc == 1)
        return attn_err_set(err, ATTN_E_NOT_FOUND, path, 0, "no tokenizer.ggml.model: the file "
                            "holds no tokenizer");
    if (rc == 0 && (rc = gguf_get_str(g, "tokenizer.ggml.pre", &pre, path, err)) == 1)
        rc = 0;
    if (rc == 0 && (rc = gguf_get_array(g, "tokenizer.ggml.tokens", GGUF_STRING, &tokens, path,
                                        err)) == 1)
        rc = attn_err_set(err, ATTN_E_NOT_FOUND, path, 0, "no tokenizer.ggml.tokens");
    if (rc == 0 && (rc = gguf_get_array(g, "tokenizer.ggml.scores", GGUF_F32, &scores, path,
                                        err)) == 1)
        rc = 0, scores = NULL;
    if (rc == 0 && (rc = gguf_get_array(g, "tokenizer.ggml.token_type", GGUF_I32, &types, path,
                                        err)) == 1)
        rc = 0, types = NULL;
    if (rc == 0 && (rc = gguf_get_array(g, "tokenizer.ggml.merges", GGUF_STRING, &merges, path,
                                        err)) == 1)
        rc = 0, merges = NULL;
    static const struct { const char *key; size_t off; } ids[] = {
        {"tokenizer.ggml.bos_token_id", offsetof(GgufVocab, bos_id)},
        {"tokenizer.ggml.eos_token_id", offsetof(GgufVocab, eos_id)},
        {"tokenizer.ggml.unknown_token_id", offsetof(GgufVocab, unk_id)},
        {"tokenizer.ggml.padding_token_id", offsetof(GgufVocab, pad_id)},
        {"tokenizer.ggml.add_bos_token", offsetof(GgufVocab, add_bos)},
        {"tokenizer.ggml.add_eos_token", offsetof(GgufVocab, add_eos)},
        {"tokenizer.ggml.add_space_prefix", offsetof(GgufVocab, add_space_prefix)},
    };
    for (size_t i = 0; rc == 0 && i < sizeof ids / sizeof ids[0]; i++) {
        int64_t x;
        if ((rc = gguf_get_int(g, ids[i].key, &x, path, err)) == 0) {
            if (x < -1 || x > 1 << 24)
                return attn_err_set(err, ATTN_E_RANGE, path, 0, "%s %lld", ids[i].key,
                                    (long long)x);
            int xi = (int)x;
            memcpy((char *)&v + ids[i].off, &xi, sizeof xi);
        }
        rc = rc == 1 ? 0 : rc;
    }
    if (rc < 0)
        return rc;
    if (tokens->arr_n > BPE_MAX_VOCAB)
        return attn_err_set(err, ATTN_E_RANGE, path, 0, "tokenizer.ggml.tokens has %llu tokens "
                            "(at most %d)", (unsigned long long)tokens->arr_n, BPE_MAX_VOCAB);
    size_t n = (size_t)tokens->arr_n, nm = merges ? (size_t)merges->arr_n : 0;
    if ((scores && scores->arr_n != n) || (types && types->arr_n != n))
        return attn_err_set(err, ATTN_E_SHAPE, path, 0, "tokenizer.ggml.tokens has %zu entries, "
                            "tokenizer.ggml.%s %llu", n, scores && scores->arr_n != n ? "scores"
                            : "token_type", (unsigned long long)(scores && scores->arr_n != n
                            ? scores->arr_n : types->arr_n));
    snprintf(model_s, sizeof model_s, "%.*s", (int)(model.len < 30 ? model.len : 30), model.s);
    if (pre.s)
        snprintf(pre_s, sizeof pre_s, "%.*s", (int)(pre.len < 60 ? pre.len : 60), pre.s);
    GgufStr *ts = malloc((n + 1) * sizeof *ts), *ms = malloc((nm + 1) * sizeof *ms);
    const char **tp = malloc((n + 1) * sizeof *tp), **mp = malloc((nm + 1) * sizeof *mp);
    size_t *tl = malloc((n + 1) * sizeof *tl), *ml = malloc((nm + 1) * sizeof *ml);
    float *sc = scores ? malloc(n * sizeof *sc + 1) : NULL;
    int32_t *ty = types ? malloc(n * sizeof *ty + 1) : NULL;
    if (!ts || !ms || !tp || !mp || !tl || !ml || (scores && !sc) || (types && !ty))
        rc = attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    if (rc == 0 && (gguf_array_strings(tokens, ts) < 0 ||
                    (merges && gguf_array_strings(merges, ms) < 0) ||
                    (scores && gguf_array_f32(scores, sc) < 0) ||
                    (types && gguf_array_i32(types, ty) < 0)))
        rc = attn_err_set(err, ATTN_E_PARSE, path, 0, "tokenizer.ggml arrays unreadable");
    for (size_t i = 0; rc == 0 && i < n; i++)
        tp[i] = ts[i].s, tl[i] = ts[i].len;
    for (size_t i = 0; rc == 0 && i < nm; i++)
        mp[i] = ms[i].s, ml[i] = ms[i].len;
    GgufStr name = {0};
    char name_s[128] = "";
    if (rc == 0 && gguf_get_str(g, "general.name", &name, path, err) == 0)
        snprintf(name_s, sizeof name_s, "%.*s", (int)(name.len < 120 ? name.len : 120), name.s);
    if (rc == 0) {
        v.name = name_s[0] ? name_s : NULL;
        v.model = model_s;
        v.pre = pre.s ? pre_s : NULL;
        v.n_tokens = (int)n;
        v.tokens = tp;
        v.token_lens = tl;
        v.scores = sc;
        v.types = ty;
        v.n_merges = (int)nm;
        v.merges = mp;
        v.merge_lens = ml;
        rc = gguf_vocab_build(out, &v, err);
        if (rc < 0 && !err->file[0]) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            attn_err_set(err, -rc, path, 0, "%s", msg);
        }
    }
    free(ts), free(ms), free(tp), free(mp), free(tl), free(ml), free(sc), free(ty);
    return rc;
}
