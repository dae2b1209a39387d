/* Attention files written (attn_write.h): .npy (numpy's format 1.0), .npz
 * (libzip writing straight into io_write_atomic's temp file) and
 * .safetensors. One writer: the maps come from an AttnMapSource one at a
 * time into one map's buffer (attn_write_attention's source copies them out
 * of its array), .npy and .safetensors write each as it comes, and the
 * .npz's attention.npy is a libzip source function that produces its bytes
 * (header, then the maps) as libzip reads them. No buffer ever holds more
 * than one map. Not for reading: attn_npy.c, attn_npz.c and
 * attn_safetensors.c open what this writes. */
#include "attnviz/attn_write.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <time.h>
#include <zip.h>

#include "attn_npy.h"
#include "attn_parse.h"
#include "attnviz/attnio.h"
#include "attnviz/io.h"

#define NPY_ALIGN 64 /* numpy's ARRAY_ALIGN: the data starts at a multiple of it */
#define NPY_HEADER_MAX 320
#define ST_ALIGN 8   /* the safetensors library pads its header to 8 */

typedef enum Format { FMT_NONE = 0, FMT_NPY, FMT_NPZ, FMT_ST } Format;

/* What a writer is handed: the pieces, built before the file is opened,
 * and where the maps come from. */
typedef struct Job {
    Format fmt;
    AttnMapSource map;
    void *user;
    int L, H;
    size_t n;                        /* L·H·Tq·Tk floats */
    size_t map_n;                    /* Tq·Tk floats: one map */
    float *buf;                      /* one map (map_n floats), little-endian once loaded */
    int src_code;                    /* a source's failure: positive ATTN_E_*, or 0 */
    int src_l, src_h;                /* the map it failed on */
    char npy[NPY_HEADER_MAX];        /* attention's .npy header (npy, npz) */
    size_t npy_len;
    unsigned char *tok;              /* tokens.npy, whole (npz), or NULL */
    size_t tok_len;
    char *st;                        /* the 8-byte size and the padded header (safetensors) */
    size_t st_len;
    char why[256];                   /* a writer's own reason for failing, or "" */
    const char *member;              /* an encoder-decoder's group: its name in the .npz */
} Job;

/* ---- the format by extension --------------------------------------------- */

/* The extension of path's last component ("" when none) into *ext. */
static Format format_of(const char *path, const char **ext)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    *ext = dot ? dot : ""; /* as attn_open.c reads it: ".npy" alone is a .npy */
    if (strcasecmp(*ext, ".npy") == 0)
        return FMT_NPY;
    if (strcasecmp(*ext, ".npz") == 0)
        return FMT_NPZ;
    if (strcasecmp(*ext, ".safetensors") == 0)
        return FMT_ST;
    return FMT_NONE;
}

/* ---- pieces ---------------------------------------------------------------- */

/* numpy's format 1.0 header for descr and shape into buf (NPY_HEADER_MAX
 * bytes): the magic, the version, the dict's length and the dict padded
 * with spaces and ended by a newline so that the data starts at a multiple
 * of 64. Returns its length. */
static size_t npy_header(char *buf, const char *descr, const size_t *shape, int nd)
{
    char dict[NPY_HEADER_MAX - 64];
    size_t k = (size_t)snprintf(dict, sizeof dict,
                                "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < nd; i++)
        k += (size_t)snprintf(dict + k, sizeof dict - k, "%s%zu", i ? ", " : "", shape[i]);
    k += (size_t)snprintf(dict + k, sizeof dict - k, "%s), }", nd == 1 ? "," : "");
    size_t total = (10 + k + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t hlen = total - 10;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(hlen & 0xFF);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, k);
    memset(buf + 10 + k, ' ', hlen - k - 1);
    buf[total - 1] = '\n';
    return total;
}

static void put_le32(unsigned char *o, uint32_t u)
{
    o[0] = (unsigned char)u;
    o[1] = (unsigned char)(u >> 8);
    o[2] = (unsigned char)(u >> 16);
    o[3] = (unsigned char)(u >> 24);
}

/* The code point at *s (well-formed UTF-8, not at its end); *s moves past it. */
static uint32_t utf8_next(const unsigned char **s)
{
    const unsigned char *p = *s;
    uint32_t c = p[0];
    int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n > 1)
        c &= 0x3Fu >> (n - 1);
    for (int i = 1; i < n; i++)
        c = c << 6 | (p[i] & 0x3Fu);
    *s = p + n;
    return c;
}

static size_t utf8_count(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* tokens.npy: a 1-D '<UN' array of the Tq (clean) tokens, N the longest's
 * code points (at least 1), each element UTF-32LE padded with zeros. */
static int tokens_npy(Job *j, char **tokens, int Tq, const char *path, AttnErr *err)
{
    size_t N = 1;
    for (int i = 0; i < Tq; i++) {
        size_t c = utf8_count(tokens[i]);
        N = c > N ? c : N;
    }
    if (N > (SIZE_MAX - NPY_HEADER_MAX) / 4 / (size_t)Tq)
        return attn_err_set(err, ATTN_E_TOO_LARGE, path, 0, "tokens of %zu characters", N);
    char descr[32], hdr[NPY_HEADER_MAX];
    size_t shape = (size_t)Tq;
    snprintf(descr, sizeof descr, "<U%zu", N);
    size_t hlen = npy_header(hdr, descr, &shape, 1);
    j->tok_len = hlen + (size_t)Tq * N * 4;
    j->tok = calloc(j->tok_len, 1);
    if (!j->tok)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory for %zu bytes of tokens",
                            j->tok_len);
    memcpy(j->tok, hdr, hlen);
    for (int i = 0; i < Tq; i++) {
        unsigned char *e = j->tok + hlen + (size_t)i * N * 4;
        const unsigned char *s = (const unsigned char *)tokens[i];
        while (*s) {
            put_le32(e, utf8_next(&s));
            e += 4;
        }
    }
    return 0;
}

/* The safetensors file's first bytes: the header's size (8 bytes,
 * little-endian) and the JSON header, padded with spaces to a multiple of
 * 8. tokens (clean UTF-8) or NULL. */
static int st_header(Job *j, const int d[4], char **tokens, const char *path, AttnErr *err)
{
    char *meta = NULL, tail[256];
    if (tokens) {
        cJSON *a = cJSON_CreateStringArray((const char *const *)tokens, d[2]);
        char *list = a ? cJSON_PrintUnformatted(a) : NULL;
        cJSON *s = list ? cJSON_CreateString(list) : NULL;
        meta = s ? cJSON_PrintUnformatted(s) : NULL; /* the list as one JSON string */
        cJSON_Delete(a);
        cJSON_free(list);
        cJSON_Delete(s);
        if (!meta)
            return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory for the header");
    }
    snprintf(tail, sizeof tail,
             "\"attention\":{\"dtype\":\"F32\",\"shape\":[%d,%d,%d,%d],\"data_offsets\":[0,%llu]}}",
             d[0], d[1], d[2], d[3], (unsigned long long)j->n * 4);
    const char *mk = "\"__metadata__\":{\"tokens\":";
    size_t n = 1 + (meta ? strlen(mk) + strlen(meta) + 2 : 0) + strlen(tail);
    size_t padded = (n + ST_ALIGN - 1) / ST_ALIGN * ST_ALIGN;
    j->st_len = 8 + padded;
    j->st = malloc(j->st_len + 1);
    if (!j->st) {
        cJSON_free(meta);
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory for the header");
    }
    for (int i = 0; i < 8; i++)
        j->st[i] = (char)((uint64_t)padded >> (8 * i) & 0xFF);
    snprintf(j->st + 8, padded + 1, "{%s%s%s%s", meta ? mk : "", meta ? meta : "",
             meta ? "}," : "", tail);
    memset(j->st + 8 + n, ' ', padded - n);
    cJSON_free(meta);
    return 0;
}

/* ---- the maps, one at a time --------------------------------------------- */

/* Map (l, h) from the source into j->buf as little-endian bytes; 0, or -1
 * with j->src_code and the map recorded. */
static int load_map(Job *j, int l, int h)
{
    int rc = j->map(j->user, l, h, j->buf);
    if (rc != 0) {
        /* a negative ATTN_E_* code; any other value counts as an I/O failure */
        j->src_code = rc < 0 && rc > -ATTN_E_COUNT_ ? -rc : ATTN_E_IO;
        j->src_l = l;
        j->src_h = h;
        return -1;
    }
    if (attn_parse_host_big_endian()) {
        unsigned char *b = (unsigned char *)j->buf;
        for (size_t i = 0; i < j->map_n; i++) {
            uint32_t u;
            memcpy(&u, b + 4 * i, 4);
            put_le32(b + 4 * i, u);
        }
    }
    return 0;
}

/* ---- writers (IoWriter: 0, or -1 with errno, j->why or j->src_code) ------- */

/* head (len bytes), then every map in order as it comes. */
static int write_maps(FILE *f, Job *j, const void *head, size_t len)
{
    if (fwrite(head, 1, len, f) != len)
        return -1;
    for (int l = 0; l < j->L; l++)
        for (int h = 0; h < j->H; h++)
            if (load_map(j, l, h) < 0 || fwrite(j->buf, 4, j->map_n, f) != j->map_n)
                return -1;
    return 0;
}

static int write_npy(FILE *f, void *ctx)
{
    Job *j = ctx;
    return write_maps(f, j, j->npy, j->npy_len);
}

static int write_st(FILE *f, void *ctx)
{
    Job *j = ctx;
    return write_maps(f, j, j->st, j->st_len);
}

/* libzip's archive written into an open FILE (the atomic writer's temp
 * file): a new archive (no existing one to read), written, sought and
 * told; committing flushes. */
typedef struct ZipOut {
    FILE *f;
    zip_error_t error;
} ZipOut;

static zip_int64_t zip_out(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
    ZipOut *z = ud;
    switch (cmd) {
    case ZIP_SOURCE_SUPPORTS:
        return ZIP_SOURCE_SUPPORTS_WRITABLE;
    case ZIP_SOURCE_STAT: /* no archive there yet (libzip's own test): it makes a new one */
        zip_error_set(&z->error, ZIP_ER_READ, ENOENT);
        return -1;
    case ZIP_SOURCE_BEGIN_WRITE:
    case ZIP_SOURCE_ROLLBACK_WRITE:
    case ZIP_SOURCE_REMOVE:
    case ZIP_SOURCE_FREE:
        return 0;
    case ZIP_SOURCE_WRITE:
        if (fwrite(data, 1, (size_t)len, z->f) != (size_t)len) {
            zip_error_set(&z->error, ZIP_ER_WRITE, errno);
            return -1;
        }
        return (zip_int64_t)len;
    case ZIP_SOURCE_SEEK_WRITE: {
        zip_source_args_seek_t *a = ZIP_SOURCE_GET_ARGS(zip_source_args_seek_t, data, len,
                                                        &z->error);
        if (!a)
            return -1;
        if (fseeko(z->f, (off_t)a->offset, a->whence) != 0) {
            zip_error_set(&z->error, ZIP_ER_SEEK, errno);
            return -1;
        }
        return 0;
    }
    case ZIP_SOURCE_TELL_WRITE: {
        off_t at = ftello(z->f);
        if (at < 0)
            zip_error_set(&z->error, ZIP_ER_TELL, errno);
        return at < 0 ? -1 : (zip_int64_t)at;
    }
    case ZIP_SOURCE_COMMIT_WRITE:
        if (fflush(z->f) != 0) {
            zip_error_set(&z->error, ZIP_ER_WRITE, errno);
            return -1;
        }
        return 0;
    case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&z->error, data, len);
    default: /* reading: there is nothing to read */
        zip_error_set(&z->error, ZIP_ER_OPNOTSUPP, 0);
        return -1;
    }
}

/* attention.npy as a libzip source: its bytes (the header, then each map
 * as it is asked for) produced as libzip reads them, once, front to back.
 * It says what a buffer source of the same bytes says (size, stored, the
 * time it was made), so the zip is the same as one written from memory;
 * libzip's crc layer computes the CRC as it reads. */
typedef struct NpyStream {
    Job *j;
    zip_error_t error;
    time_t mtime;
    zip_uint64_t size;   /* the header and n floats' bytes */
    zip_uint64_t pos;    /* bytes produced so far */
    int l, h;            /* the next map to load */
    size_t at;           /* bytes of j->buf produced; map_n·4 when it is used up */
} NpyStream;

static zip_int64_t npy_stream(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
    NpyStream *s = ud;
    Job *j = s->j;
    size_t map_bytes = j->map_n * 4;
    switch (cmd) {
    case ZIP_SOURCE_SUPPORTS:
        return ZIP_SOURCE_SUPPORTS_READABLE; /* not seekable: read once, in order */
    case ZIP_SOURCE_OPEN:
        if (s->pos != 0) { /* the maps are asked for once: no second reading */
            zip_error_set(&s->error, ZIP_ER_OPNOTSUPP, 0);
            return -1;
        }
        s->at = map_bytes;
        return 0;
    case ZIP_SOURCE_READ: {
        unsigned char *out = data;
        zip_uint64_t done = 0;
        while (done < len && s->pos < s->size) {
            if (s->pos < j->npy_len) {
                size_t k = j->npy_len - (size_t)s->pos;
                k = k < len - done ? k : (size_t)(len - done);
                memcpy(out + done, j->npy + s->pos, k);
                done += k;
                s->pos += k;
                continue;
            }
            if (s->at == map_bytes) {
                if (load_map(j, s->l, s->h) < 0) {
                    zip_error_set(&s->error, ZIP_ER_READ, 0);
                    return -1;
                }
                s->at = 0;
                if (++s->h == j->H) {
                    s->h = 0;
                    s->l++;
                }
            }
            size_t k = map_bytes - s->at;
            k = k < len - done ? k : (size_t)(len - done);
            memcpy(out + done, (const unsigned char *)j->buf + s->at, k);
            done += k;
            s->at += k;
            s->pos += k;
        }
        return (zip_int64_t)done;
    }
    case ZIP_SOURCE_CLOSE:
    case ZIP_SOURCE_FREE: /* the stream lives on write_npz's stack */
        return 0;
    case ZIP_SOURCE_STAT: {
        zip_stat_t *st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &s->error);
        if (!st)
            return -1;
        zip_stat_init(st);
        st->mtime = s->mtime;
        st->size = s->size;
        st->comp_size = s->size;
        st->comp_method = ZIP_CM_STORE;
        st->encryption_method = ZIP_EM_NONE;
        st->valid = ZIP_STAT_MTIME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD |
                    ZIP_STAT_ENCRYPTION_METHOD;
        return sizeof *st;
    }
    case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&s->error, data, len);
    default:
        zip_error_set(&s->error, ZIP_ER_OPNOTSUPP, 0);
        return -1;
    }
}

/* src added to za as the stored member name (src freed on failure); 0 or -1. */
static int zip_member(zip_t *za, const char *name, zip_source_t *src)
{
    if (!src)
        return -1;
    zip_int64_t i = zip_file_add(za, name, src, 0);
    if (i < 0) {
        zip_source_free(src);
        return -1;
    }
    return zip_set_file_compression(za, (zip_uint64_t)i, ZIP_CM_STORE, 0);
}

static int write_npz(FILE *f, void *ctx)
{
    Job *j = ctx;
    ZipOut out = {f, {0}};
    NpyStream att = {.j = j, .size = j->npy_len + (zip_uint64_t)j->n * 4};
    zip_error_t ze;
    int rc = -1;
    zip_error_init(&out.error);
    zip_error_init(&att.error);
    zip_error_init(&ze);
    zip_source_t *dst = zip_source_function_create(zip_out, &out, &ze);
    zip_t *za = dst ? zip_open_from_source(dst, ZIP_CREATE | ZIP_TRUNCATE, &ze) : NULL;
    if (!za) {
        snprintf(j->why, sizeof j->why, "%s", zip_error_strerror(&ze));
        zip_source_free(dst);
        goto cleanup;
    }
    att.mtime = time(NULL); /* as a buffer source takes its creation's time */
    zip_source_t *att_src = zip_source_function(za, npy_stream, &att);
    if (zip_member(za, "attention.npy", att_src) < 0 ||
        (j->tok &&
         zip_member(za, "tokens.npy", zip_source_buffer(za, j->tok, j->tok_len, 0)) < 0) ||
        zip_close(za) < 0) {
        snprintf(j->why, sizeof j->why, "%s", zip_strerror(za));
        zip_discard(za); /* frees the sources: att is not used after */
        goto cleanup;
    }
    rc = 0;
cleanup:
    zip_error_fini(&ze);
    zip_error_fini(&att.error);
    zip_error_fini(&out.error);
    return rc;
}

/* ---- the entry point -------------------------------------------------------- */

/* tokens as valid UTF-8 (each bad byte U+FFFD), NULL-terminated, into *out. */
static int tokens_clean(char ***out, const char *const *tokens, int n, const char *path,
                        AttnErr *err)
{
    char **t = calloc((size_t)n + 1, sizeof *t);
    if (!t)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory for %d tokens", n);
    for (int i = 0; i < n; i++) {
        if (!tokens[i]) {
            attn_tokens_free(t);
            return attn_err_set(err, ATTN_E_PARSE, path, 0, "token %d of %d is missing (NULL)",
                                i, n);
        }
        t[i] = attn_utf8_clean_dup(tokens[i], strlen(tokens[i]));
        if (!t[i]) {
            attn_tokens_free(t);
            return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory for token %d", i);
        }
    }
    *out = t;
    return 0;
}

/* The arguments checked: sizes at least 1 and the byte count fits; *n. */
static int check_args(size_t *n, AttnMapSource map, const int d[4], Format fmt,
                      const char *const *tokens, const char *path, AttnErr *err)
{
    if (d[0] < 1 || d[1] < 1 || d[2] < 1 || d[3] < 1 || !map)
        return attn_err_set(err, ATTN_E_SHAPE, path, 0,
                            "nothing to write: %d×%d×%d×%d attention%s", d[0], d[1], d[2], d[3],
                            map ? "" : " without numbers");
    *n = 1;
    for (int i = 0; i < 4; i++) {
        if (*n > SIZE_MAX / 8 / (size_t)d[i])
            return attn_err_set(err, ATTN_E_TOO_LARGE, path, 0,
                                "%d×%d×%d×%d attention is too large to write", d[0], d[1], d[2],
                                d[3]);
        *n *= (size_t)d[i];
    }
    if (tokens && fmt != FMT_NPY && d[2] != d[3])
        return attn_err_set(err, ATTN_E_SHAPE, path, 0,
                            "one token list names rows and columns, but the attention is %d×%d "
                            "(not square)", d[2], d[3]);
    return 0;
}

/* The pieces the format needs and one map's buffer, into j. */
static int prepare(Job *j, const int d[4], const char *const *tokens, const char *path,
                   AttnErr *err)
{
    char **clean = NULL;
    int rc = 0;
    j->map_n = (size_t)d[2] * (size_t)d[3];
    j->buf = malloc(j->map_n * 4);
    if (!j->buf)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory for a %d×%d map", d[2],
                            d[3]);
    size_t shape[4] = {(size_t)d[0], (size_t)d[1], (size_t)d[2], (size_t)d[3]};
    j->npy_len = npy_header(j->npy, "<f4", shape, 4);
    if (tokens && j->fmt != FMT_NPY)
        rc = tokens_clean(&clean, tokens, d[2], path, err);
    if (rc == 0 && clean && j->fmt == FMT_NPZ)
        rc = tokens_npy(j, clean, d[2], path, err);
    if (rc == 0 && j->fmt == FMT_ST)
        rc = st_header(j, d, clean, path, err);
    attn_tokens_free(clean);
    return rc;
}

int attn_write_attention_maps(const char *path, AttnMapSource map, void *user, int L, int H,
                              int Tq, int Tk, const char *const *tokens, AttnErr *err)
{
    const char *ext = "";
    const int d[4] = {L, H, Tq, Tk};
    if (!path || !*path)
        return attn_err_set(err, ATTN_E_IO, "", 0, "no file name to write the attention to");
    Job j = {.fmt = format_of(path, &ext), .map = map, .user = user, .L = L, .H = H};
    if (j.fmt == FMT_NONE && *ext)
        return attn_err_set(err, ATTN_E_PARSE, path, 0,
                            "cannot write attention as %s: the name must end in .npy, .npz or "
                            ".safetensors", ext);
    if (j.fmt == FMT_NONE)
        return attn_err_set(err, ATTN_E_PARSE, path, 0,
                            "no extension: the name must end in .npy, .npz or .safetensors");
    int rc = check_args(&j.n, map, d, j.fmt, tokens, path, err);
    if (rc == 0)
        rc = prepare(&j, d, tokens, path, err);
    if (rc == 0) {
        IoWriter w = j.fmt == FMT_NPY ? write_npy : j.fmt == FMT_NPZ ? write_npz : write_st;
        rc = io_write_atomic(path, w, &j, err);
        if (rc < 0 && j.src_code)
            rc = attn_err_set(err, j.src_code, path, 0,
                              "cannot get the map of layer %d, head %d (from 0): %s", j.src_l,
                              j.src_h, attn_strerror(j.src_code));
        else if (rc < 0 && j.why[0])
            rc = attn_err_set(err, -rc, path, 0, "write failed: %s", j.why);
    }
    free(j.buf);
    free(j.tok);
    free(j.st);
    return rc;
}

/* ---- an encoder-decoder's groups ------------------------------------------ */

#define GROUPS_MAX 4

typedef struct GroupsJob {
    Job g[GROUPS_MAX];   /* each group's maps */
    int n;
    Job tok[2];          /* source_tokens.npy, target_tokens.npy (their tok only) */
    char why[256];
} GroupsJob;

static int write_groups(FILE *f, void *ctx)
{
    GroupsJob *gj = ctx;
    ZipOut out = {f, {0}};
    NpyStream att[GROUPS_MAX];
    zip_error_t ze;
    int rc = -1;
    zip_error_init(&out.error);
    zip_error_init(&ze);
    for (int k = 0; k < gj->n; k++) {
        att[k] = (NpyStream){.j = &gj->g[k], .size = gj->g[k].npy_len + (zip_uint64_t)gj->g[k].n * 4,
                             .mtime = time(NULL)};
        zip_error_init(&att[k].error);
    }
    zip_source_t *dst = zip_source_function_create(zip_out, &out, &ze);
    zip_t *za = dst ? zip_open_from_source(dst, ZIP_CREATE | ZIP_TRUNCATE, &ze) : NULL;
    if (!za) {
        snprintf(gj->why, sizeof gj->why, "%s", zip_error_strerror(&ze));
        zip_source_free(dst);
        goto cleanup;
    }
    static const char *const tok_names[2] = {"source_tokens.npy", "target_tokens.npy"};
    int ok = 1;
    for (int k = 0; ok && k < gj->n; k++) {
        char name[80];
        snprintf(name, sizeof name, "%s.npy", gj->g[k].member);
        ok = zip_member(za, name, zip_source_function(za, npy_stream, &att[k])) == 0;
    }
    for (int k = 0; ok && k < 2; k++)
        ok = zip_member(za, tok_names[k], zip_source_buffer(za, gj->tok[k].tok, gj->tok[k].tok_len, 0)) == 0;
    if (!ok || zip_close(za) < 0) {
        snprintf(gj->why, sizeof gj->why, "%s", zip_strerror(za));
        zip_discard(za);
        goto cleanup;
    }
    rc = 0;
cleanup:
    for (int k = 0; k < gj->n; k++)
        zip_error_fini(&att[k].error);
    zip_error_fini(&ze);
    zip_error_fini(&out.error);
    return rc;
}

int attn_write_groups_npz(const char *path, const AttnWriteGroup *groups, int n,
                          const char *const *source_tokens, int Ts,
                          const char *const *target_tokens, int Tt, AttnErr *err)
{
    const char *ext = "";
    if (!path || !*path)
        return attn_err_set(err, ATTN_E_IO, "", 0, "no file name to write the attention to");
    if (format_of(path, &ext) != FMT_NPZ)
        return attn_err_set(err, ATTN_E_PARSE, path, 0,
                            "an encoder-decoder's maps (encoder, decoder, cross) go in a .npz, "
                            "not %s", *ext ? ext : "a name without an extension");
    if (n < 1 || n > GROUPS_MAX || Ts < 1 || Tt < 1)
        return attn_err_set(err, ATTN_E_SHAPE, path, 0, "nothing to write");
    GroupsJob gj = {.n = n};
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        const AttnWriteGroup *g = &groups[k];
        const int d[4] = {g->L, g->H, g->Tq, g->Tk};
        gj.g[k] = (Job){.fmt = FMT_NPZ, .map = g->map, .user = g->user, .L = g->L, .H = g->H,
                        .member = g->name};
        rc = check_args(&gj.g[k].n, g->map, d, FMT_NPZ, NULL, path, err);
        if (rc == 0)
            rc = prepare(&gj.g[k], d, NULL, path, err);
    }
    const char *const *lists[2] = {source_tokens, target_tokens};
    int counts[2] = {Ts, Tt};
    for (int k = 0; k < 2 && rc == 0; k++) {
        char **clean = NULL;
        rc = tokens_clean(&clean, lists[k], counts[k], path, err);
        if (rc == 0)
            rc = tokens_npy(&gj.tok[k], clean, counts[k], path, err);
        attn_tokens_free(clean);
    }
    if (rc == 0) {
        rc = io_write_atomic(path, write_groups, &gj, err);
        int src = 0;
        for (int k = 0; k < n && rc < 0 && !src; k++)
            if ((src = gj.g[k].src_code) != 0)
                rc = attn_err_set(err, src, path, 0,
                                  "cannot get the %s map of layer %d, head %d (from 0): %s",
                                  groups[k].name, gj.g[k].src_l, gj.g[k].src_h, attn_strerror(src));
        if (rc < 0 && !src && gj.why[0])
            rc = attn_err_set(err, -rc, path, 0, "write failed: %s", gj.why);
    }
    for (int k = 0; k < n; k++) {
        free(gj.g[k].buf);
        free(gj.g[k].tok);
        free(gj.g[k].st);
    }
    free(gj.tok[0].tok);
    free(gj.tok[1].tok);
    return rc;
}

/* attn_write_attention's source: map (l, h) copied out of the whole array. */
typedef struct Dense {
    const float *v;
    int H;
    size_t map_n;
} Dense;

static int dense_map(void *user, int l, int h, float *out)
{
    const Dense *a = user;
    memcpy(out, a->v + ((size_t)l * (size_t)a->H + (size_t)h) * a->map_n, a->map_n * sizeof *out);
    return 0;
}

int attn_write_attention(const char *path, const float *v, int L, int H, int Tq, int Tk,
                         const char *const *tokens, AttnErr *err)
{
    Dense a = {v, H, Tq > 0 && Tk > 0 ? (size_t)Tq * (size_t)Tk : 0};
    return attn_write_attention_maps(path, v ? dense_map : NULL, &a, L, H, Tq, Tk, tokens, err);
}
