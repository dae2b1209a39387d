/* .npz attention files (np.savez, np.savez_compressed) through libzip: the
 * members attention.npy or layer_0.npy, layer_1.npy, …, and tokens.npy or
 * query_tokens.npy + key_tokens.npy, each inflated once into one buffer. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "attn_npy.h"
#include "attnviz/attnio.h"

#define ALIGN 64
#define MAX_MEMBERS (ATTN_FILE_MAX_LAYERS + 2)
/* deflate's best ratio is 1032:1 */
#define MAX_RATIO 1040u
#define MAX_TOKEN_CHARS 4096

/* The members to read: attention (or layers) first, then the token lists. */
typedef struct Members {
    int n, n_layers;        /* n_layers = 0: one attention.npy */
    int tok, qtok, ktok;    /* index into idx[], or -1 */
    zip_int64_t idx[MAX_MEMBERS];
    char name[MAX_MEMBERS][32];
    size_t off[MAX_MEMBERS], size[MAX_MEMBERS];
} Members;

static int add(Members *m, zip_t *za, const char *member)
{
    zip_int64_t i = zip_name_locate(za, member, 0);
    if (i < 0)
        return -1;
    m->idx[m->n] = i;
    snprintf(m->name[m->n], sizeof m->name[0], "%s", member);
    return m->n++;
}

/* The names of (up to 8) members, for a message. */
static void list_names(zip_t *za, char *buf, size_t n)
{
    zip_int64_t count = zip_get_num_entries(za, 0);
    size_t k = 0;
    buf[0] = '\0';
    for (zip_int64_t i = 0; i < count && i < 8 && k < n; i++) {
        const char *s = zip_get_name(za, (zip_uint64_t)i, 0);
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", s ? s : "?");
    }
    if (count > 8 && k < n)
        snprintf(buf + k, n - k, ", …");
    if (count == 0)
        snprintf(buf, n, "none");
}

/* The index of a member layer_K.npy with K >= n, or -1. */
static int layer_past(zip_t *za, int n)
{
    zip_int64_t count = zip_get_num_entries(za, 0);
    for (zip_int64_t i = 0; i < count; i++) {
        const char *s = zip_get_name(za, (zip_uint64_t)i, 0);
        int k = -1, used = 0;
        if (s && sscanf(s, "layer_%d.npy%n", &k, &used) == 1 && used > 0 && !s[used] && k >= n)
            return k;
    }
    return -1;
}

/* An encoder-decoder's group (attn_write.h's attn_write_groups_npz): its
 * token lists, source_tokens.npy and target_tokens.npy, as the group's
 * rows and columns (the encoder's both the source's, the decoder's both
 * the target's, the cross maps' rows the target's and columns the
 * source's). 1 when tensor is a group and the archive has both lists. */
static int group_tokens(Members *m, zip_t *za, const char *tensor)
{
    int enc = strcmp(tensor, "encoder") == 0, dec = strcmp(tensor, "decoder") == 0;
    if ((!enc && !dec && strcmp(tensor, "cross") != 0) ||
        zip_name_locate(za, "source_tokens.npy", 0) < 0 || zip_name_locate(za, "target_tokens.npy", 0) < 0)
        return 0;
    if (enc || dec) {
        m->tok = add(m, za, enc ? "source_tokens.npy" : "target_tokens.npy");
    } else {
        m->qtok = add(m, za, "target_tokens.npy");
        m->ktok = add(m, za, "source_tokens.npy");
    }
    return 1;
}

static int find_members(Members *m, zip_t *za, const char *name, const char *tensor, AttnErr *err)
{
    char member[32], names[512];
    memset(m, 0, sizeof *m);
    m->tok = m->qtok = m->ktok = -1;
    /* an encoder-decoder's file without a group named: its cross maps */
    if (strcmp(tensor, "attention") == 0 && zip_name_locate(za, "attention.npy", 0) < 0 &&
        zip_name_locate(za, "layer_0.npy", 0) < 0 && zip_name_locate(za, "cross.npy", 0) >= 0)
        tensor = "cross";
    snprintf(member, sizeof member, "%.20s.npy", tensor); /* "attention" or "scores" */
    int found = add(m, za, member) >= 0;
    if (!found && strcmp(tensor, "attention") != 0) {
        list_names(za, names, sizeof names);
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "no %s in the archive (members: %s)", member, names);
    }
    if (!found) {
        while (m->n_layers <= ATTN_FILE_MAX_LAYERS) {
            snprintf(member, sizeof member, "layer_%d.npy", m->n_layers);
            if (add(m, za, member) < 0)
                break;
            m->n_layers++;
        }
        if (m->n_layers > ATTN_FILE_MAX_LAYERS)
            return attn_err_set(err, ATTN_E_TOO_LARGE, name, 0, "more than %d layer_N.npy members",
                                ATTN_FILE_MAX_LAYERS);
        int gap = m->n_layers > 0 ? layer_past(za, m->n_layers) : -1;
        if (gap >= 0)
            return attn_err_set(err, ATTN_E_PARSE, name, 0,
                                "layer_%d.npy is missing before layer_%d.npy", m->n_layers, gap);
        if (m->n_layers == 0) {
            list_names(za, names, sizeof names);
            return attn_err_set(err, ATTN_E_PARSE, name, 0,
                                "neither attention.npy nor layer_0.npy in the archive "
                                "(members: %s)", names);
        }
    }
    if (group_tokens(m, za, tensor))
        return 0;
    m->tok = add(m, za, "tokens.npy");
    if (m->tok < 0) {
        m->qtok = add(m, za, "query_tokens.npy");
        m->ktok = add(m, za, "key_tokens.npy");
        if ((m->qtok < 0) != (m->ktok < 0))
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "%s without %s",
                                m->qtok >= 0 ? "query_tokens.npy" : "key_tokens.npy",
                                m->qtok >= 0 ? "key_tokens.npy" : "query_tokens.npy");
    }
    return 0;
}

/* Sizes and offsets in the one buffer; the total into *total. */
static int plan(Members *m, zip_t *za, size_t len, size_t *total, const char *name, AttnErr *err)
{
    size_t at = 0;
    zip_uint64_t packed = 0;
    for (int i = 0; i < m->n; i++) {
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(za, (zip_uint64_t)m->idx[i], 0, &st) < 0 ||
            !(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "%s: cannot read its zip entry",
                                m->name[i]);
        if (st.comp_size > len || st.size > (zip_uint64_t)(st.comp_size + 64) * MAX_RATIO ||
            st.size > ((zip_uint64_t)1 << 40))
            return attn_err_set(err, ATTN_E_PARSE, name, 0,
                                "%s: %llu bytes from %llu compressed: a damaged archive",
                                m->name[i], (unsigned long long)st.size,
                                (unsigned long long)st.comp_size);
        packed += st.comp_size; /* members that overlap would inflate without bound */
        if (packed > len)
            return attn_err_set(err, ATTN_E_PARSE, name, 0,
                                "%s: the members overlap (%llu compressed bytes in %zu): a damaged "
                                "archive", m->name[i], (unsigned long long)packed, len);
        m->off[i] = at;
        m->size[i] = (size_t)st.size;
        at += ((size_t)st.size + ALIGN - 1) / ALIGN * ALIGN;
    }
    *total = at;
    return 0;
}

/* Inflate every member into buf at its offset, exactly its size. */
static int inflate_all(const Members *m, zip_t *za, unsigned char *buf, const char *name,
                       AttnErr *err)
{
    for (int i = 0; i < m->n; i++) {
        zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)m->idx[i], 0);
        if (!zf)
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "%s: %s", m->name[i],
                                zip_strerror(za));
        size_t got = 0;
        zip_int64_t r = 1;
        while (got < m->size[i] && (r = zip_fread(zf, buf + m->off[i] + got, m->size[i] - got)) > 0)
            got += (size_t)r;
        unsigned char extra;
        if (r >= 0 && got == m->size[i])
            r = zip_fread(zf, &extra, 1); /* also checks the CRC at the end */
        if (r != 0 || got != m->size[i]) {
            int rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "%s: %s", m->name[i],
                                  r < 0 ? zip_file_strerror(zf) : "size differs from its entry");
            zip_fclose(zf);
            return rc;
        }
        zip_fclose(zf);
    }
    return 0;
}

/* One UTF-32 element (N code points, trailing NULs dropped) as UTF-8. */
static char *utf32_dup(const unsigned char *p, size_t N, int big)
{
    while (N > 0 && !memcmp(p + (N - 1) * 4, "\0\0\0\0", 4))
        N--;
    char *out = malloc(N * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < N; i++, p += 4) {
        uint32_t c = big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                         : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
        if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            c = 0xFFFD;
        if (c < 0x80) {
            *o++ = (char)c;
        } else if (c < 0x800) {
            *o++ = (char)(0xC0 | c >> 6);
            *o++ = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            *o++ = (char)(0xE0 | c >> 12);
            *o++ = (char)(0x80 | (c >> 6 & 0x3F));
            *o++ = (char)(0x80 | (c & 0x3F));
        } else {
            *o++ = (char)(0xF0 | c >> 18);
            *o++ = (char)(0x80 | (c >> 12 & 0x3F));
            *o++ = (char)(0x80 | (c >> 6 & 0x3F));
            *o++ = (char)(0x80 | (c & 0x3F));
        }
    }
    *o = '\0';
    return out;
}

/* A token list from a 1-D '<U'N / '>U'N / '|S'N array of want elements. */
static int tokens_from(char ***out, const unsigned char *p, size_t len, int want,
                       const char *member, const char *name, AttnErr *err)
{
    NpyHeader h;
    char sh[128];
    int rc = attn_npy_header(&h, p, len, member, name, err);
    if (rc < 0)
        return rc;
    const char *d = h.descr;
    int utf32 = (d[0] == '<' || d[0] == '>') && d[1] == 'U';
    int bytes = (d[0] == '|' && d[1] == 'S') || d[0] == 'S';
    const char *num = bytes && d[0] == 'S' ? d + 1 : d + 2;
    char *end = NULL;
    long N = (utf32 || bytes) ? strtol(num, &end, 10) : 0;
    if (!(utf32 || bytes) || num[0] < '0' || num[0] > '9' || *end || N < 1 || N > MAX_TOKEN_CHARS)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                            "%s: unknown dtype %s (a string array, '<U' or 'S', expected)",
                            member, d);
    if (h.ndim != 1)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0, "%s: shape %s is not a list", member,
                            attn_npy_shape_str(&h, sh, sizeof sh));
    if (h.shape[0] != (uint64_t)want)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0, "%s: %" PRIu64 " tokens, the attention has %d",
                            member, h.shape[0], want);
    size_t esize = (size_t)N * (utf32 ? 4 : 1);
    if (h.data_len / esize < (size_t)want)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "%s: truncated: %d tokens of %s need %zu bytes, found %zu", member,
                            want, d, esize * (size_t)want, h.data_len);
    char **t = calloc((size_t)want + 1, sizeof *t);
    if (!t)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "%s: out of memory", member);
    for (int i = 0; i < want; i++) {
        const unsigned char *e = p + h.data_off + (size_t)i * esize;
        size_t n = (size_t)N;
        if (!utf32)
            while (n > 0 && e[n - 1] == 0)
                n--;
        t[i] = utf32 ? utf32_dup(e, n, d[0] == '>') : attn_utf8_clean_dup((const char *)e, n);
        if (!t[i]) {
            attn_tokens_free(t);
            return attn_err_set(err, ATTN_E_NOMEM, name, 0, "%s: out of memory", member);
        }
    }
    *out = t;
    return 0;
}

/* The attention parts from the inflated members. */
static int parts_from(AttnFile *f, const Members *m, const unsigned char *buf, const char *name,
                      AttnErr *err)
{
    int n = m->n_layers ? m->n_layers : 1;
    for (int i = 0; i < n; i++) {
        NpyHeader h;
        AttnPart *p = &f->parts[i];
        int rc = attn_npy_header(&h, buf + m->off[i], m->size[i], m->name[i], name, err);
        if (rc == 0)
            rc = attn_npy_part(p, &h, buf + m->off[i], m->n_layers > 0, m->name[i], name, err);
        if (rc < 0)
            return rc;
        if (i > 0 && (p->H != f->H || p->Tq != f->Tq || p->Tk != f->Tk))
            return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                                "%s: %d heads of %d×%d, layer_0.npy has %d of %d×%d", m->name[i],
                                p->H, p->Tq, p->Tk, f->H, f->Tq, f->Tk);
        f->H = p->H;
        f->Tq = p->Tq;
        f->Tk = p->Tk;
        f->L += p->L;
    }
    f->n_parts = n;
    f->cross = f->Tq != f->Tk;
    return 0;
}

static int tokens_all(AttnFile *f, const Members *m, const unsigned char *buf, const char *name,
                      AttnErr *err)
{
    if (m->tok >= 0) {
        int i = m->tok;
        if (f->Tq != f->Tk)
            return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                                "tokens.npy is one list but the attention is %d×%d (not square): "
                                "give query_tokens.npy and key_tokens.npy",
                                f->Tq, f->Tk);
        int rc = tokens_from(&f->q_tokens, buf + m->off[i], m->size[i], f->Tq, m->name[i], name,
                             err);
        f->k_tokens = f->q_tokens;
        return rc;
    }
    if (m->qtok < 0)
        return 0;
    int rc = tokens_from(&f->q_tokens, buf + m->off[m->qtok], m->size[m->qtok], f->Tq,
                         m->name[m->qtok], name, err);
    if (rc == 0)
        rc = tokens_from(&f->k_tokens, buf + m->off[m->ktok], m->size[m->ktok], f->Tk,
                         m->name[m->ktok], name, err);
    f->cross = 1;
    return rc;
}

static int parse_zip(AttnFile *f, zip_t *za, size_t len, const char *name, const char *tensor,
                     AttnErr *err)
{
    Members *m = malloc(sizeof *m);
    size_t total = 0;
    if (!m)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    int rc = find_members(m, za, name, tensor, err);
    if (rc == 0)
        rc = plan(m, za, len, &total, name, err);
    if (rc == 0) {
        f->buf = malloc(total ? total : 1);
        f->buf_len = total;
        if (!f->buf)
            rc = attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory for %zu bytes", total);
    }
    if (rc == 0)
        rc = inflate_all(m, za, f->buf, name, err);
    if (rc == 0)
        rc = parts_from(f, m, f->buf, name, err);
    if (rc == 0)
        rc = tokens_all(f, m, f->buf, name, err);
    free(m);
    return rc;
}

int attn_npz_parse(AttnFile *f, const void *data, size_t len, const char *name, AttnErr *err)
{
    return attn_npz_parse_tensor(f, data, len, name, "attention", err);
}

int attn_npz_parse_tensor(AttnFile *f, const void *data, size_t len, const char *name,
                          const char *tensor, AttnErr *err)
{
    zip_error_t ze;
    memset(f, 0, sizeof *f);
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(data, len, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY, &ze) : NULL;
    if (!za) {
        int rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "not a readable .npz (zip) archive: %s",
                              zip_error_strerror(&ze));
        zip_source_free(src);
        zip_error_fini(&ze);
        return rc;
    }
    zip_error_fini(&ze);
    int rc = parse_zip(f, za, len, name, tensor, err);
    zip_discard(za);
    if (rc < 0) {
        attn_file_close(f);
        return rc;
    }
    snprintf(f->name, sizeof f->name, "%s", name ? name : "");
    return 0;
}
