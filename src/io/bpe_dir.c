/* A tokenizer from its files: vocab.json + merges.txt or tokenizer.json
 * read from disk, a model folder's (one with only SentencePiece models
 * refused naming them), and --print tokens' lines. The parsing is
 * bpe_files.c's. */
#include "attnviz/bpe_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnviz/io.h"

/* ---- files ------------------------------------------------------------------------ */

int bpe_load_vocab_merges(Bpe **out, const char *vocab_path, const char *merges_path,
                          AttnErr *err)
{
    char *v = NULL, *m = NULL;
    size_t vn = 0, mn = 0;
    *out = NULL;
    int rc = io_read_file(vocab_path, BPE_MAX_FILE_BYTES, &v, &vn, err);
    if (rc == 0)
        rc = io_read_file(merges_path, BPE_MAX_FILE_BYTES, &m, &mn, err);
    if (rc == 0)
        rc = bpe_parse_vocab_merges(out, v, vn, vocab_path, m, mn, merges_path, err);
    free(v);
    free(m);
    return rc;
}

int bpe_load_tokenizer_json(Bpe **out, const char *path, AttnErr *err)
{
    char *d = NULL;
    size_t n = 0;
    *out = NULL;
    int rc = io_read_file(path, BPE_MAX_FILE_BYTES, &d, &n, err);
    if (rc == 0)
        rc = bpe_parse_tokenizer_json(out, d, n, path, err);
    free(d);
    return rc;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The SentencePiece models a folder holds without a tokenizer.json (T5's
 * spiece.model, Marian's source.spm and target.spm, ...), named into
 * names (cap bytes, ", " between); how many. */
static int sentencepiece_files(const char *dir, char *names, size_t cap)
{
    static const char *const spm[] = {"spiece.model", "source.spm", "target.spm",
                                      "sentencepiece.bpe.model", "tokenizer.model"};
    char path[4096];
    int n = 0;
    names[0] = '\0';
    for (size_t i = 0; i < sizeof spm / sizeof spm[0]; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, spm[i]) >= sizeof path ||
            !is_file(path))
            continue;
        size_t at = strlen(names);
        snprintf(names + at, cap - at, "%s%s", n++ ? ", " : "", spm[i]);
    }
    return n;
}

int bpe_load_dir(Bpe **out, const char *dir, AttnErr *err)
{
    char tj[4096], vj[4096], mt[4096], spm[256];
    *out = NULL;
    if ((size_t)snprintf(tj, sizeof tj, "%s/tokenizer.json", dir) >= sizeof tj ||
        (size_t)snprintf(vj, sizeof vj, "%s/vocab.json", dir) >= sizeof vj ||
        (size_t)snprintf(mt, sizeof mt, "%s/merges.txt", dir) >= sizeof mt)
        return attn_err_set(err, ATTN_E_IO, dir, 0, "the folder's name is too long");
    if (is_file(tj))
        return bpe_load_tokenizer_json(out, tj, err);
    if (is_file(vj) && is_file(mt))
        return bpe_load_vocab_merges(out, vj, mt, err);
    if (sentencepiece_files(dir, spm, sizeof spm))
        return attn_err_set(err, ATTN_E_UNSUPPORTED, dir, 0,
                            "no tokenizer.json: the tokenizer is SentencePiece's %s only, which "
                            "attnviz does not read (transformers' save_pretrained of its fast "
                            "tokenizer writes tokenizer.json)", spm);
    return attn_err_set(err, ATTN_E_IO, dir, 0,
                        "no tokenizer: neither tokenizer.json nor vocab.json with merges.txt %s",
                        is_file(vj) ? "(merges.txt is missing)"
                        : is_file(mt) ? "(vocab.json is missing)" : "is there");
}

int bpe_print_tokens(FILE *f, const Bpe *b, const int *ids, int n)
{
    return bpe_print_tokens_marked(f, b, ids, n, n);
}

int bpe_print_tokens_marked(FILE *f, const Bpe *b, const int *ids, int n, int n_given)
{
    char small[256];
    for (int i = 0; i < n; i++) {
        size_t need = bpe_token_text(b, ids[i], NULL, small, sizeof small);
        char *text = need < sizeof small ? small : malloc(need + 1);
        if (!text)
            return -ATTN_E_NOMEM;
        if (text != small)
            bpe_token_text(b, ids[i], NULL, text, need + 1);
        fprintf(f, "%d\t", ids[i]);
        io_json_string(f, text);
        fputs(i >= n_given ? "\tg\n" : "\n", f);
        if (text != small)
            free(text);
    }
    return ferror(f) ? -ATTN_E_IO : 0;
}
