/* Opening attention files by extension (.npy and .safetensors mapped
 * read-only, .npz mapped then inflated, .json read whole), closing them, and
 * token lists from text files (--tokens, --key-tokens). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn_npy.h"
#include "attnviz/attnio.h"
#include "attnviz/io.h"

static int ends_with(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

int attn_path_is_attention(const char *path)
{
    return path && (ends_with(path, ".npy") || ends_with(path, ".npz") ||
                    ends_with(path, ".safetensors"));
}


static int open_json(AttnFile *f, const char *path, AttnErr *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = io_read_file(path, ATTN_MAX_FILE_BYTES, &text, &len, err);
    if (rc < 0)
        return rc;
    if (len == 0) {
        free(text);
        return attn_err_set(err, ATTN_E_EMPTY, path, 0, "empty file");
    }
    rc = attn_json_parse(f, text, len, path, err);
    if (rc < 0 || f->buf) /* the parser made its own buffer: the text is not borrowed */
        free(text);
    else
        f->buf = text, f->buf_len = len;
    return rc;
}

int attn_file_open(AttnFile *f, const char *path, AttnErr *err)
{
    return attn_file_open_tensor(f, path, "attention", err);
}

int attn_file_open_tensor(AttnFile *f, const char *path, const char *tensor, AttnErr *err)
{
    memset(f, 0, sizeof *f);
    int npy = ends_with(path, ".npy"), npz = ends_with(path, ".npz");
    int st = ends_with(path, ".safetensors"), attention = strcmp(tensor, "attention") == 0;
    if (!attention && (npy || ends_with(path, ".json")))
        return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0, "holds one array: no %s beside it", tensor);
    if (ends_with(path, ".json"))
        return open_json(f, path, err);
    if (!npy && !npz && !st)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0,
                            "not an attention file (.npy, .npz, .safetensors or .json)");
    void *map = NULL;
    size_t len = 0;
    int rc = io_map_file(path, ATTN_E_IO, &map, &len, err);
    if (rc < 0)
        return rc;
    rc = npy ? attn_npy_parse(f, map, len, path, err)
       : npz ? attn_npz_parse_tensor(f, map, len, path, tensor, err)
             : attn_safetensors_parse_tensor(f, map, len, path, tensor, err);
    if (rc < 0 || npz) { /* an npz's members are inflated: the mapping is not needed */
        io_unmap_file(map, len);
        return rc;
    }
    f->map = map;
    f->map_len = len;
    return 0;
}

void attn_file_close(AttnFile *f)
{
    if (!f)
        return;
    if (f->k_tokens != f->q_tokens)
        attn_tokens_free(f->k_tokens);
    attn_tokens_free(f->q_tokens);
    if (f->map)
        io_unmap_file(f->map, f->map_len);
    free(f->buf);
    if (f->computed_free)
        f->computed_free(f->computed_user);
    memset(f, 0, sizeof *f);
}

void attn_tokens_free(char **t)
{
    if (!t)
        return;
    for (char **p = t; *p; p++)
        free(*p);
    free(t);
}

int attn_tokens_load(char ***out, int *n, const char *path, AttnErr *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    *n = 0;
    int rc = io_read_file(path, ATTN_MAX_FILE_BYTES, &text, &len, err);
    if (rc < 0)
        return rc;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    lines += len > 0 && text[len - 1] != '\n';
    if (lines > ATTN_FILE_MAX_TOKENS) {
        free(text);
        return attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, path, 0, "%zu tokens; at most %d",
                            lines, ATTN_FILE_MAX_TOKENS);
    }
    char **t = calloc(lines + 1, sizeof *t);
    size_t k = 0;
    for (size_t at = 0; t && k < lines; k++) {
        size_t e = at;
        while (e < len && text[e] != '\n')
            e++;
        size_t w = e - at;
        if (w > 0 && text[at + w - 1] == '\r')
            w--;
        t[k] = attn_utf8_clean_dup(text + at, w);
        if (!t[k])
            break;
        at = e + 1;
    }
    free(text);
    if (!t || k < lines) {
        attn_tokens_free(t);
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    }
    *out = t;
    *n = (int)lines;
    return 0;
}

int attn_file_set_tokens(AttnFile *f, char **q, int nq, char **k, int nk, AttnErr *err)
{
    int rc = 0;
    if (!k && f->Tq != f->Tk)
        rc = attn_err_set(err, ATTN_E_SHAPE, f->name, 0,
                          "--tokens alone (%d tokens) for a %d×%d map: give --key-tokens too", nq,
                          f->Tq, f->Tk);
    else if (nq != f->Tq)
        rc = attn_err_set(err, ATTN_E_SHAPE, f->name, 0,
                          "--tokens has %d tokens, the attention has %d %s", nq, f->Tq,
                          k ? "query rows" : "tokens");
    else if (k && nk != f->Tk)
        rc = attn_err_set(err, ATTN_E_SHAPE, f->name, 0,
                          "--key-tokens has %d tokens, the attention has %d key columns", nk,
                          f->Tk);
    if (rc < 0) {
        attn_tokens_free(q);
        if (k != q)
            attn_tokens_free(k);
        return rc;
    }
    if (f->k_tokens != f->q_tokens)
        attn_tokens_free(f->k_tokens);
    attn_tokens_free(f->q_tokens);
    f->q_tokens = q;
    f->k_tokens = k ? k : q;
    f->cross = f->Tq != f->Tk || k != NULL;
    return 0;
}
