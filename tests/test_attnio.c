/* The .npy/.npz readers and the file functions of attnio.h on fixtures
 * written by numpy itself (tests/fixtures/attention/make_npy.py): every
 * dtype, byte order, Fortran order, format version, shape and npz layout,
 * their values checked element by element, and every kind of broken file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnviz/attnio.h"
#include "test_util.h"

#define FIX "tests/fixtures/attention/"

/* IEEE half to double, independently of attn_f16_to_float. */
static double half(uint16_t v)
{
    int s = v >> 15, e = (v >> 10) & 31, m = v & 1023;
    double x = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return s ? -x : x;
}

/* Element (l, h, i, j) of one part, read from its bytes. */
static double part_at(const AttnPart *p, int l, int h, int i, int j)
{
    size_t L = (size_t)p->L, H = (size_t)p->H, Tq = (size_t)p->Tq, Tk = (size_t)p->Tk;
    size_t idx = p->fortran ? l + L * (h + H * (i + Tq * j)) : ((l * H + h) * Tq + i) * Tk + j;
    size_t es = p->dtype == ATTN_DT_F16 ? 2 : p->dtype == ATTN_DT_F32 ? 4 : 8;
    unsigned char b[8], r[8];
    memcpy(b, (const unsigned char *)p->data + idx * es, es);
    for (size_t k = 0; k < es; k++) /* to little-endian (the test host's order) */
        r[k] = p->big_endian ? b[es - 1 - k] : b[k];
    if (es == 2)
        return half((uint16_t)(r[0] | r[1] << 8));
    if (es == 4) {
        float f;
        memcpy(&f, r, 4);
        return f;
    }
    double d;
    memcpy(&d, r, 8);
    return d;
}

/* The whole tensor against NAME.expect.bin (float32, (L, H, Tq, Tk)). */
static void check_values(const AttnFile *f, const char *stem)
{
    char path[256];
    size_t len;
    snprintf(path, sizeof path, FIX "%s.expect.bin", stem);
    char *want = test_slurp(path, &len);
    assert_non_null(want);
    assert_int_equal(len, (size_t)f->L * f->H * f->Tq * f->Tk * 4);
    size_t e = 0;
    int l0 = 0;
    for (int p = 0; p < f->n_parts; l0 += f->parts[p].L, p++) {
        const AttnPart *pt = &f->parts[p];
        assert_int_equal(pt->H, f->H);
        assert_int_equal(pt->Tq, f->Tq);
        assert_int_equal(pt->Tk, f->Tk);
        for (int l = 0; l < pt->L; l++)
            for (int h = 0; h < f->H; h++)
                for (int i = 0; i < f->Tq; i++)
                    for (int j = 0; j < f->Tk; j++, e++) {
                        float w;
                        memcpy(&w, want + e * 4, 4);
                        if (part_at(pt, l, h, i, j) != (double)w)
                            fail_msg("%s: element (%d, %d, %d, %d) is %g, numpy wrote %g", stem,
                                     l0 + l, h, i, j, part_at(pt, l, h, i, j), (double)w);
                    }
    }
    assert_int_equal(l0, f->L);
    free(want);
}

typedef struct Good {
    const char *stem, *ext;
    int L, H, Tq, Tk, n_parts;
    AttnDtype dt;
    int big, fortran, cross;
} Good;

static const Good goods[] = {
    {"f32_le", "npy", 1, 1, 4, 4, 1, ATTN_DT_F32, 0, 0, 0},
    {"f32_be", "npy", 1, 1, 4, 4, 1, ATTN_DT_F32, 1, 0, 0},
    {"f16_le", "npy", 1, 2, 3, 3, 1, ATTN_DT_F16, 0, 0, 0},
    {"f16_be", "npy", 1, 2, 3, 3, 1, ATTN_DT_F16, 1, 0, 0},
    {"f64_le", "npy", 2, 2, 3, 3, 1, ATTN_DT_F64, 0, 0, 0},
    {"f64_be", "npy", 1, 1, 3, 3, 1, ATTN_DT_F64, 1, 0, 0},
    {"fortran", "npy", 2, 3, 4, 4, 1, ATTN_DT_F32, 0, 1, 0},
    {"batch1", "npy", 2, 3, 4, 4, 1, ATTN_DT_F32, 0, 0, 0},
    {"cross", "npy", 1, 2, 3, 5, 1, ATTN_DT_F32, 0, 0, 1},
    {"cross_fortran_be", "npy", 1, 1, 3, 5, 1, ATTN_DT_F64, 1, 1, 1},
    {"v2", "npy", 1, 2, 3, 3, 1, ATTN_DT_F32, 0, 0, 0},
    {"stored_u", "npz", 1, 2, 4, 4, 1, ATTN_DT_F32, 0, 0, 0},
    {"deflated_s", "npz", 2, 2, 3, 3, 1, ATTN_DT_F16, 1, 0, 0},
    {"layers", "npz", 3, 2, 3, 3, 3, ATTN_DT_F32, 0, 0, 0},
    {"cross_tokens", "npz", 1, 2, 2, 3, 1, ATTN_DT_F64, 0, 0, 1},
    {"wins", "npz", 1, 1, 3, 3, 1, ATTN_DT_F32, 0, 0, 0},
};

static void test_good_files(void **state)
{
    (void)state;
    for (size_t g = 0; g < sizeof goods / sizeof goods[0]; g++) {
        const Good *w = &goods[g];
        char path[256];
        AttnFile *f = calloc(1, sizeof *f);
        AttnErr err = {0};
        snprintf(path, sizeof path, FIX "%s.%s", w->stem, w->ext);
        if (attn_file_open(f, path, &err) != 0)
            fail_msg("%s: %s", path, err.msg);
        print_message("%s: %d×%d×%d×%d in %d part(s)\n", path, f->L, f->H, f->Tq, f->Tk,
                      f->n_parts);
        assert_int_equal(f->L, w->L);
        assert_int_equal(f->H, w->H);
        assert_int_equal(f->Tq, w->Tq);
        assert_int_equal(f->Tk, w->Tk);
        assert_int_equal(f->n_parts, w->n_parts);
        assert_int_equal(f->cross, w->cross);
        assert_string_equal(f->name, path);
        for (int p = 0; p < f->n_parts; p++) {
            assert_int_equal(f->parts[p].dtype, w->dt);
            assert_int_equal(f->parts[p].big_endian, w->big);
            assert_int_equal(f->parts[p].fortran, w->fortran);
        }
        /* npy: mapped; npz: inflated into one buffer, not mapped */
        assert_true(strcmp(w->ext, "npy") ? f->buf && !f->map : f->map && !f->buf);
        check_values(f, w->stem);
        attn_file_close(f);
        assert_null(f->map);
        assert_int_equal(f->n_parts, 0);
        free(f);
    }
}

static void check_tokens(char **t, const char *const *want, int n)
{
    assert_non_null(t);
    for (int i = 0; i < n; i++)
        assert_string_equal(t[i], want[i]);
    assert_null(t[n]);
}

static void test_npz_tokens(void **state)
{
    (void)state;
    static const char *const u[] = {"the", "caf\xc3\xa9", "\xf0\x9f\x98\x80", "xxxxxxxxx"};
    static const char *const s[] = {"a", "bb", "ccc"};
    static const char *const q[] = {"q1", "q2"}, *const k[] = {"k1", "k2", "k3"};
    AttnFile *f = calloc(1, sizeof *f);
    AttnErr err = {0};
    assert_int_equal(attn_file_open(f, FIX "stored_u.npz", &err), 0);
    check_tokens(f->q_tokens, u, 4);
    assert_ptr_equal(f->q_tokens, f->k_tokens);
    attn_file_close(f);
    assert_int_equal(attn_file_open(f, FIX "deflated_s.npz", &err), 0);
    check_tokens(f->q_tokens, s, 3);
    assert_ptr_equal(f->q_tokens, f->k_tokens);
    attn_file_close(f);
    assert_int_equal(attn_file_open(f, FIX "cross_tokens.npz", &err), 0);
    check_tokens(f->q_tokens, q, 2);
    check_tokens(f->k_tokens, k, 3);
    attn_file_close(f);
    /* a lone surrogate and U+110000 become U+FFFD */
    static const char *const w[] = {"a", "b\xef\xbf\xbd", "c\xef\xbf\xbd"};
    assert_int_equal(attn_file_open(f, FIX "wins.npz", &err), 0);
    check_tokens(f->q_tokens, w, 3);
    attn_file_close(f);
    assert_int_equal(attn_file_open(f, FIX "layers.npz", &err), 0);
    assert_null(f->q_tokens);
    for (int p = 0; p < 3; p++)
        assert_int_equal(f->parts[p].L, 1);
    attn_file_close(f);
    free(f);
}

typedef struct Bad {
    const char *file;
    int code;
    const char *says;
} Bad;

static const Bad bads[] = {
    {"bad_truncated.npy", ATTN_E_PARSE, "truncated"},
    {"bad_magic.npy", ATTN_E_PARSE, "magic"},
    {"bad_dtype.npy", ATTN_E_UNSUPPORTED, "unknown dtype <i4"},
    {"bad_dict.npy", ATTN_E_PARSE, "bad .npy header"},
    {"bad_hlen.npy", ATTN_E_PARSE, "header length 65535 runs past the end"},
    {"bad_empty.npy", ATTN_E_EMPTY, "empty"},
    {"bad_1d.npy", ATTN_E_SHAPE, "shape (5,)"},
    {"bad_batch.npy", ATTN_E_SHAPE, "shape (2, 2, 3, 4, 4)"},
    {"bad_tokens_count.npz", ATTN_E_SHAPE, "tokens.npy: 3 tokens, the attention has 4"},
    {"bad_not_square.npz", ATTN_E_SHAPE, "3×5 (not square)"},
    {"bad_no_attention.npz", ATTN_E_PARSE, "neither attention.npy nor layer_0.npy"},
    {"bad_layers_differ.npz", ATTN_E_SHAPE, "layer_1.npy: 2 heads of 4×4"},
    {"bad_layer_gap.npz", ATTN_E_PARSE, "layer_1.npy is missing before layer_2.npy"},
    {"bad_member_truncated.npz", ATTN_E_PARSE, "attention.npy: truncated"},
    {"bad_crc.npz", ATTN_E_PARSE, "attention.npy: CRC error"},
    {"bad_layer_shape.npz", ATTN_E_SHAPE, "layer_0.npy: shape (2, 2, 3, 3): a layer must be"},
    {"bad_query_only.npz", ATTN_E_PARSE, "query_tokens.npy without key_tokens.npy"},
    {"bad_tokens_dtype.npz", ATTN_E_UNSUPPORTED, "tokens.npy: unknown dtype <i8"},
    {"nothing_here.npy", ATTN_E_IO, "No such file"},
    {"make_npy.py", ATTN_E_UNSUPPORTED, "not an attention file"},
};

static void test_bad_files(void **state)
{
    (void)state;
    AttnFile *f = malloc(sizeof *f);
    for (size_t b = 0; b < sizeof bads / sizeof bads[0]; b++) {
        char path[256], line[1200];
        AttnErr err = {0};
        snprintf(path, sizeof path, FIX "%s", bads[b].file);
        memset(f, 0xA5, sizeof *f);
        int rc = attn_file_open(f, path, &err);
        attn_err_format(&err, line, sizeof line);
        print_message("%s\n", line);
        if (rc != -bads[b].code || err.code != bads[b].code || !strstr(err.msg, bads[b].says))
            fail_msg("%s: rc %d, wanted %d saying \"%s\"; got \"%s\"", path, rc, -bads[b].code,
                     bads[b].says, line);
        assert_string_equal(err.file, path);
        /* nothing to free */
        assert_null(f->map);
        assert_null(f->buf);
        assert_null(f->q_tokens);
        assert_int_equal(f->n_parts, 0);
    }
    /* the members found are named */
    AttnErr err = {0};
    assert_true(attn_file_open(f, FIX "bad_no_attention.npz", &err) < 0);
    assert_non_null(strstr(err.msg, "weights.npy, tokens.npy"));
    free(f);
}

static void test_directory(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnio-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/d.npy", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    AttnFile *f = malloc(sizeof *f);
    AttnErr err = {0};
    assert_int_equal(attn_file_open(f, path, &err), -ATTN_E_IO);
    assert_non_null(strstr(err.msg, "directory"));
    assert_string_equal(err.file, path);
    rmdir(path);
    rmdir(dir);
    free(f);
}

/* A .npy in memory: version major, header dict text (padded), data. */
static size_t make_npy(unsigned char *out, int major, const char *dict, const void *data,
                       size_t n)
{
    size_t pre = major == 1 ? 10 : 12, hl = strlen(dict) + 1;
    hl += (64 - (pre + hl) % 64) % 64;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    out[8] = (unsigned char)(hl & 255);
    out[9] = (unsigned char)(hl >> 8);
    if (major != 1)
        out[10] = out[11] = 0;
    memset(out + pre, ' ', hl);
    memcpy(out + pre, dict, strlen(dict));
    out[pre + hl - 1] = '\n';
    memcpy(out + pre + hl, data, n);
    return pre + hl + n;
}

typedef struct Hdr {
    int major;
    const char *dict;
    int code;  /* 0: parses */
    const char *says;
} Hdr;

static const Hdr hdrs[] = {
    {1, "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}", 0, NULL},
    {1, "{\"fortran_order\":False,\"descr\":\"=f4\",\"shape\":(2,2,),}", 0, NULL},
    {3, "{ 'descr' : '<f4' , 'shape' : ( 1 , 2 , 2 ) , 'fortran_order' : True , }", 0, NULL},
    {1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2, 2)}", ATTN_E_UNSUPPORTED,
     "unknown dtype |f4"},
    {1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 2)}", ATTN_E_UNSUPPORTED,
     "unknown dtype <c8"},
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1}", ATTN_E_PARSE,
     "other than"},
    {1, "{'descr': '<f4', 'shape': (2, 2)}", ATTN_E_PARSE, "no fortran_order"},
    {1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 2)}", ATTN_E_PARSE, "neither"},
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)", ATTN_E_PARSE, "','"},
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)} x", ATTN_E_PARSE, "after"},
    {1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}",
     ATTN_E_PARSE, "twice"},
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}", ATTN_E_SHAPE, "shape ()"},
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 0)}", ATTN_E_SHAPE, "size is 0"},
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 9000)}", ATTN_E_SHAPE,
     "8192 tokens"},
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (257, 1, 2, 2)}", ATTN_E_SHAPE,
     "256 layers"},
    /* 256 * 256 * 8192 * 8192 * 8 = 2^45 bytes: a 32-bit size_t (wasm32)
     * would wrap the product to 0 and take 32 bytes for it */
    {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (256, 256, 8192, 8192)}",
     ATTN_E_PARSE, "truncated: shape (256, 256, 8192, 8192) of <f8 needs 35184372088832 bytes"},
    /* 2^32 + 2 tokens: named as it is, not wrapped to 2 (which would fit) */
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967298, 2)}", ATTN_E_SHAPE,
     "shape (4294967298, 2): more than 8192 tokens"},
    {4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}", ATTN_E_UNSUPPORTED,
     "version 4.0"},
};

static void test_npy_headers(void **state)
{
    (void)state;
    static const float v[4] = {0.5f, 0.25f, 0.125f, 1.0f};
    unsigned char buf[512];
    AttnFile *f = malloc(sizeof *f);
    for (size_t k = 0; k < sizeof hdrs / sizeof hdrs[0]; k++) {
        AttnErr err = {0};
        size_t n = make_npy(buf, hdrs[k].major, hdrs[k].dict, v, sizeof v);
        int rc = attn_npy_parse(f, buf, n, "mem.npy", &err);
        if (rc != -hdrs[k].code || (hdrs[k].says && !strstr(err.msg, hdrs[k].says)))
            fail_msg("%s: rc %d (%s), wanted %d saying %s", hdrs[k].dict, rc, err.msg,
                     -hdrs[k].code, hdrs[k].says ? hdrs[k].says : "-");
        if (rc == 0) {
            assert_int_equal(f->Tq * f->Tk * f->H * f->L, 4);
            assert_int_equal(f->parts[0].big_endian, 0);
            assert_ptr_equal(f->parts[0].data, buf + n - sizeof v);
            assert_float_equal(part_at(&f->parts[0], 0, 0, 1, 1), 1.0, 0);
            assert_int_equal(f->parts[0].fortran, k == 2);
        } else {
            assert_int_equal(err.code, hdrs[k].code);
            assert_string_equal(err.file, "mem.npy");
        }
    }
    /* shorter than the magic, and not a zip */
    AttnErr err = {0};
    assert_int_equal(attn_npy_parse(f, "\x93NUM", 4, "s.npy", &err), -ATTN_E_PARSE);
    assert_int_equal(attn_npz_parse(f, "PK\3\4garbage", 11, "g.npz", &err), -ATTN_E_PARSE);
    assert_non_null(strstr(err.msg, "zip"));
    assert_null(f->buf);
    free(f);
}

static void test_paths(void **state)
{
    (void)state;
    assert_true(attn_path_is_attention("a.npy"));
    assert_true(attn_path_is_attention("dir/A.NPZ"));
    assert_true(attn_path_is_attention("m.safetensors"));
    assert_false(attn_path_is_attention("a.json"));
    assert_false(attn_path_is_attention("npy"));
    assert_false(attn_path_is_attention(".npy.txt"));
}

static void test_tokens_load(void **state)
{
    (void)state;
    static const char *const crlf[] = {"a", "b", "", "c"};
    static const char *const four[] = {"the", "caf\xc3\xa9", "\xef\xbf\xbd", "x"};
    char **t = NULL;
    int n = -1;
    AttnErr err = {0};
    assert_int_equal(attn_tokens_load(&t, &n, FIX "tokens_crlf.txt", &err), 0);
    assert_int_equal(n, 4);
    check_tokens(t, crlf, 4);
    attn_tokens_free(t);
    assert_int_equal(attn_tokens_load(&t, &n, FIX "tokens_4.txt", &err), 0);
    assert_int_equal(n, 4);
    check_tokens(t, four, 4);
    attn_tokens_free(t);
    assert_int_equal(attn_tokens_load(&t, &n, FIX "tokens_empty.txt", &err), 0);
    assert_int_equal(n, 0);
    assert_null(t[0]);
    attn_tokens_free(t);
    assert_int_equal(attn_tokens_load(&t, &n, FIX "no_tokens.txt", &err), -ATTN_E_IO);
    assert_null(t);
    assert_string_equal(err.file, FIX "no_tokens.txt");
}

static char **load(const char *name, int *n)
{
    char **t = NULL;
    AttnErr err = {0};
    assert_int_equal(attn_tokens_load(&t, n, name, &err), 0);
    return t;
}

static void test_set_tokens(void **state)
{
    (void)state;
    AttnFile *f = calloc(1, sizeof *f);
    AttnErr err = {0};
    int nq, nk;
    assert_int_equal(attn_file_open(f, FIX "stored_u.npz", &err), 0);
    char **q = load(FIX "tokens_crlf.txt", &nq);
    assert_int_equal(attn_file_set_tokens(f, q, nq, NULL, 0, &err), 0);
    assert_ptr_equal(f->q_tokens, q);
    assert_ptr_equal(f->k_tokens, q);
    assert_int_equal(f->cross, 0);
    q = load(FIX "tokens_empty.txt", &nq);
    assert_int_equal(attn_file_set_tokens(f, q, nq, NULL, 0, &err), -ATTN_E_SHAPE);
    assert_non_null(strstr(err.msg, "--tokens has 0 tokens, the attention has 4"));
    assert_string_equal(f->q_tokens[0], "a"); /* the old ones stay */
    attn_file_close(f);

    assert_int_equal(attn_file_open(f, FIX "cross.npy", &err), 0); /* 3×5 */
    q = load(FIX "tokens_crlf.txt", &nq);
    assert_int_equal(attn_file_set_tokens(f, q, nq, NULL, 0, &err), -ATTN_E_SHAPE);
    assert_non_null(strstr(err.msg, "3×5"));
    q = load(FIX "tokens_crlf.txt", &nq);
    char **k = load(FIX "tokens_crlf.txt", &nk);
    assert_int_equal(attn_file_set_tokens(f, q, nq, k, nk, &err), -ATTN_E_SHAPE);
    assert_non_null(strstr(err.msg, "--tokens has 4 tokens, the attention has 3"));
    AttnFile *g = calloc(1, sizeof *g);
    assert_int_equal(attn_file_open(g, FIX "cross_tokens.npz", &err), 0); /* 2×3, own tokens */
    attn_file_close(f);
    f->Tq = 4;
    f->Tk = 4;
    q = load(FIX "tokens_crlf.txt", &nq);
    k = load(FIX "tokens_4.txt", &nk);
    assert_int_equal(attn_file_set_tokens(f, q, nq, k, nk, &err), 0);
    assert_int_equal(f->cross, 1);
    assert_string_equal(f->k_tokens[1], "caf\xc3\xa9");
    attn_file_close(f);
    /* replacing a file's own lists frees them (ASan would see a leak) */
    q = load(FIX "tokens_crlf.txt", &nq);
    k = load(FIX "tokens_4.txt", &nk);
    assert_int_equal(attn_file_set_tokens(g, q, nq, k, nk, &err), -ATTN_E_SHAPE);
    assert_non_null(strstr(err.msg, "--tokens has 4 tokens, the attention has 2"));
    attn_file_close(g);
    free(g);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_files),   cmocka_unit_test(test_npz_tokens),
        cmocka_unit_test(test_bad_files),    cmocka_unit_test(test_directory),
        cmocka_unit_test(test_npy_headers),  cmocka_unit_test(test_paths),
        cmocka_unit_test(test_tokens_load),  cmocka_unit_test(test_set_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
