/* attn_write_attention (attn_write.h): each format written from a small
 * array that is not symmetric (with -0, NaN with a payload, ±inf and a
 * subnormal) and awkward tokens, opened again by the project's own reader
 * (attn_file_open) with every value compared bit for bit and the tokens
 * equal; the bytes of each format's header; invalid UTF-8; the errors (an
 * unknown extension, a missing or read-only folder, a full file-size limit)
 * leaving nothing behind. attn_write_attention_maps: the same bytes as
 * from the array for every format and several shapes, the .npz the same
 * as libzip makes from buffers, each map asked for once and in order into
 * one buffer, a failing source leaving nothing behind, and 2×3×300×300
 * maps made by a formula (no whole array anywhere) read back. The three
 * files and expect.json stay in build/test-out/attn_write/ for
 * tests/attn_write_numpy.sh (numpy reads them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include "attnviz/attn_write.h"
#include "attnviz/attnio.h"
#include "test_util.h"

#define OUT "build/test-out/attn_write"
#define L_ 2
#define H_ 3
#define T_ 9
#define N_ (L_ * H_ * T_ * T_)

static const char *const tokens[T_] = {
    "\"quoted\"", "back\\slash", "é", "日本", "🚂", "Ġtrain", "<|endoftext|>", "", "tab\tnew\nline",
};

static float values[N_];

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Distinct values, no two maps alike and no map symmetric, and the
 * awkward ones first. */
static void fill_values(void)
{
    for (int i = 0; i < N_; i++)
        values[i] = (float)(i * 0.37 + 1) / 7.0f - (float)(i % 5) * 0.125f;
    values[1] = -0.0f;
    values[2] = from_bits(0x7FC12345u); /* a NaN with a payload */
    values[3] = INFINITY;
    values[4] = -INFINITY;
    values[5] = from_bits(1u); /* the smallest subnormal */
    values[6] = FLT_MAX;
}

static int setup(void **state)
{
    (void)state;
    fill_values();
    mkdir("build", 0755);
    mkdir("build/test-out", 0755);
    mkdir(OUT, 0755);
    return 0;
}

/* Files in dir whose names contain part (temp files: ".tmp-"). */
static int count_named(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, part) != NULL;
    closedir(d);
    return n;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The file opened by attn_file_open: shape, float32 little-endian C order,
 * every value's bits, and the tokens (NULL: none). */
static void check_reads_back(const char *path, const float *v, int L, int H, int Tq, int Tk,
                             const char *const *want)
{
    AttnFile f;
    AttnErr err = {0};
    int rc = attn_file_open(&f, path, &err);
    if (rc != 0)
        fail_msg("%s: %s", path, err.msg);
    assert_int_equal(f.L, L);
    assert_int_equal(f.H, H);
    assert_int_equal(f.Tq, Tq);
    assert_int_equal(f.Tk, Tk);
    assert_int_equal(f.n_parts, 1);
    assert_int_equal(f.parts[0].dtype, ATTN_DT_F32);
    assert_false(f.parts[0].fortran);
    size_t n = (size_t)L * H * Tq * Tk;
    const uint32_t one = 1;
    if (*(const unsigned char *)&one == 1) /* the bytes as stored, on a little-endian host */
        assert_memory_equal(f.parts[0].data, v, n * 4);
    assert_false(f.parts[0].big_endian);
    for (size_t i = 0; i < n; i++) {
        uint32_t a, b;
        float x = attn_file_at(&f, (int)(i / ((size_t)H * Tq * Tk)),
                               (int)(i / ((size_t)Tq * Tk) % (size_t)H), (int)(i / (size_t)Tk % (size_t)Tq),
                               (int)(i % (size_t)Tk));
        memcpy(&a, &x, 4);
        memcpy(&b, &v[i], 4);
        if (a != b)
            fail_msg("%s: element %zu is 0x%08x, wrote 0x%08x", path, i, a, b);
    }
    if (!want) {
        assert_null(f.q_tokens);
    } else {
        assert_non_null(f.q_tokens);
        assert_ptr_equal(f.k_tokens, f.q_tokens);
        assert_false(f.cross);
        for (int i = 0; i < Tq; i++)
            assert_string_equal(f.q_tokens[i], want[i]);
        assert_null(f.q_tokens[Tq]);
    }
    attn_file_close(&f);
}

static void write_ok(const char *path, const float *v, int L, int H, int Tq, int Tk,
                     const char *const *tok)
{
    AttnErr err = {0};
    int rc = attn_write_attention(path, v, L, H, Tq, Tk, tok, &err);
    if (rc != 0)
        fail_msg("%s: %s", path, err.msg);
    assert_int_equal(count_named(OUT, ".tmp-"), 0);
}

/* The .npy's header as numpy writes format 1.0. */
static void check_npy_header(const unsigned char *b, size_t len, const char *dict,
                             size_t data_len)
{
    assert_true(len >= 10);
    assert_memory_equal(b, "\x93NUMPY\x01\x00", 8);
    size_t hlen = b[8] | (size_t)b[9] << 8;
    assert_int_equal((10 + hlen) % 64, 0);
    assert_int_equal(len, 10 + hlen + data_len);
    size_t k = strlen(dict);
    assert_true(hlen > k);
    assert_memory_equal(b + 10, dict, k);
    for (size_t i = 10 + k; i < 10 + hlen - 1; i++)
        assert_int_equal(b[i], ' ');
    assert_int_equal(b[10 + hlen - 1], '\n');
}

static void writes_npy(void **state)
{
    (void)state;
    const char *path = OUT "/attention.npy";
    write_ok(path, values, L_, H_, T_, T_, tokens);
    size_t len;
    char *b = test_slurp(path, &len);
    assert_non_null(b);
    check_npy_header((unsigned char *)b, len,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 9, 9), }",
                     (size_t)N_ * 4);
    free(b);
    check_reads_back(path, values, L_, H_, T_, T_, NULL);
}

/* A member of the zip at path, whole; its compression method into *method. */
static char *zip_member(const char *path, const char *name, size_t *len, int *method)
{
    int e = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY, &e);
    assert_non_null(za);
    zip_stat_t st;
    assert_int_equal(zip_stat(za, name, 0, &st), 0);
    *method = st.comp_method;
    *len = (size_t)st.size;
    char *b = malloc(*len + 1);
    assert_non_null(b);
    zip_file_t *zf = zip_fopen(za, name, 0);
    assert_non_null(zf);
    assert_int_equal(zip_fread(zf, b, *len), (zip_int64_t)*len);
    zip_fclose(zf);
    assert_int_equal(zip_get_num_entries(za, 0), 2);
    zip_discard(za);
    return b;
}

static void writes_npz(void **state)
{
    (void)state;
    const char *path = OUT "/attention.npz";
    write_ok(path, values, L_, H_, T_, T_, tokens);
    check_reads_back(path, values, L_, H_, T_, T_, tokens);

    size_t len;
    int method;
    char *b = zip_member(path, "attention.npy", &len, &method);
    assert_int_equal(method, ZIP_CM_STORE);
    check_npy_header((unsigned char *)b, len,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 9, 9), }",
                     (size_t)N_ * 4);
    free(b);
    /* "<|endoftext|>" is the longest: 13 code points; "日本" two of them */
    b = zip_member(path, "tokens.npy", &len, &method);
    assert_int_equal(method, ZIP_CM_STORE);
    check_npy_header((unsigned char *)b, len,
                     "{'descr': '<U13', 'fortran_order': False, 'shape': (9,), }",
                     (size_t)T_ * 13 * 4);
    size_t off = len - (size_t)T_ * 13 * 4;
    const unsigned char *jp = (unsigned char *)b + off + 3 * 13 * 4;
    assert_memory_equal(jp, "\xE5\x65\x00\x00\x2C\x67\x00\x00\x00\x00\x00\x00", 12);
    const unsigned char *train = (unsigned char *)b + off + 4 * 13 * 4;
    assert_memory_equal(train, "\x82\xF6\x01\x00\x00\x00\x00\x00", 8);
    free(b);
}

static void writes_safetensors(void **state)
{
    (void)state;
    const char *path = OUT "/attention.safetensors";
    write_ok(path, values, L_, H_, T_, T_, tokens);
    check_reads_back(path, values, L_, H_, T_, T_, tokens);

    size_t len;
    unsigned char *b = (unsigned char *)test_slurp(path, &len);
    assert_non_null(b);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | b[i];
    assert_int_equal(n % 8, 0);
    assert_int_equal(len, 8 + n + (uint64_t)N_ * 4);
    char *hdr = strndup((char *)b + 8, (size_t)n);
    assert_non_null(hdr);
    assert_true(strncmp(hdr, "{\"__metadata__\":{\"tokens\":\"[", 28) == 0);
    cJSON *root = cJSON_Parse(hdr);
    assert_non_null(root);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    cJSON *ts = cJSON_GetObjectItemCaseSensitive(meta, "tokens");
    assert_true(cJSON_IsString(ts));
    assert_int_equal(cJSON_GetArraySize(meta), 1);
    cJSON *list = cJSON_Parse(ts->valuestring);
    assert_true(cJSON_IsArray(list));
    assert_int_equal(cJSON_GetArraySize(list), T_);
    for (int i = 0; i < T_; i++)
        assert_string_equal(cJSON_GetArrayItem(list, i)->valuestring, tokens[i]);
    cJSON *att = cJSON_GetObjectItemCaseSensitive(root, "attention");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(att, "dtype")->valuestring, "F32");
    char *shape = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(att, "shape"));
    char *offs = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(att, "data_offsets"));
    assert_string_equal(shape, "[2,3,9,9]");
    assert_string_equal(offs, "[0,1944]");
    assert_int_equal(cJSON_GetArraySize(root), 2);
    cJSON_free(shape);
    cJSON_free(offs);
    cJSON_Delete(list);
    cJSON_Delete(root);
    free(hdr);
    free(b);
}

/* What tests/attn_write_numpy.sh compares numpy's reading with. */
static void writes_expectation(void **state)
{
    (void)state;
    cJSON *root = cJSON_CreateObject();
    int shape[4] = {L_, H_, T_, T_};
    cJSON_AddItemToObject(root, "shape", cJSON_CreateIntArray(shape, 4));
    cJSON *bits = cJSON_AddArrayToObject(root, "bits");
    for (int i = 0; i < N_; i++) {
        uint32_t u;
        memcpy(&u, &values[i], 4);
        cJSON_AddItemToArray(bits, cJSON_CreateNumber((double)u));
    }
    cJSON_AddItemToObject(root, "tokens", cJSON_CreateStringArray(tokens, T_));
    char *text = cJSON_Print(root);
    assert_non_null(text);
    FILE *f = fopen(OUT "/expect.json", "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    cJSON_free(text);
    cJSON_Delete(root);
}

/* Bad bytes become U+FFFD, one per byte, in both formats with tokens. */
static void cleans_invalid_utf8(void **state)
{
    (void)state;
    const char *bad[3] = {"a\xFF" "b\xE6\x97", "\xC0\xAF", "ok"};
    const char *want[3] = {"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD",
                           "\xEF\xBF\xBD\xEF\xBF\xBD", "ok"};
    float v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    write_ok(OUT "/bad-utf8.npz", v, 1, 1, 3, 3, bad);
    check_reads_back(OUT "/bad-utf8.npz", v, 1, 1, 3, 3, want);
    write_ok(OUT "/bad-utf8.safetensors", v, 1, 1, 3, 3, bad);
    check_reads_back(OUT "/bad-utf8.safetensors", v, 1, 1, 3, 3, want);
}

/* A Tq×Tk array: .npy always, the others without tokens; one token list
 * for a non-square map is refused and nothing is written. */
static void cross_and_no_tokens(void **state)
{
    (void)state;
    float v[30];
    for (int i = 0; i < 30; i++)
        v[i] = (float)i / 30.0f;
    const char *tok[3] = {"a", "b", "c"};
    const char *exts[3] = {"npy", "npz", "safetensors"};
    for (int e = 0; e < 3; e++) {
        char path[128];
        snprintf(path, sizeof path, OUT "/cross.%s", exts[e]);
        unlink(path);
        write_ok(path, v, 1, 2, 3, 5, e == 0 ? tok : NULL);
        check_reads_back(path, v, 1, 2, 3, 5, NULL);
        if (e == 0)
            continue;
        snprintf(path, sizeof path, OUT "/cross-tokens.%s", exts[e]);
        unlink(path);
        AttnErr err = {0};
        assert_int_equal(attn_write_attention(path, v, 1, 2, 3, 5, tok, &err), -ATTN_E_SHAPE);
        assert_non_null(strstr(err.msg, "3×5"));
        assert_false(exists(path));
    }
    /* self-attention without tokens */
    write_ok(OUT "/plain.npz", values, L_, H_, T_, T_, NULL);
    check_reads_back(OUT "/plain.npz", values, L_, H_, T_, T_, NULL);
}

static void refuses_bad_arguments(void **state)
{
    (void)state;
    AttnErr err = {0};
    float v[4] = {0};
    const char *bad[] = {OUT "/a.txt", OUT "/a.NPZ.json", OUT "/noext", OUT "/x.npy/b"};
    for (int i = 0; i < 4; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(attn_write_attention(bad[i], v, 1, 1, 2, 2, NULL, &err), -ATTN_E_PARSE);
        assert_string_equal(err.file, bad[i]);
        assert_non_null(strstr(err.msg, ".npy, .npz or .safetensors"));
        assert_false(exists(bad[i]));
    }
    memset(&err, 0, sizeof err);
    attn_write_attention(OUT "/a.txt", v, 1, 1, 2, 2, NULL, &err);
    assert_non_null(strstr(err.msg, ".txt"));
    attn_write_attention(OUT "/noext", v, 1, 1, 2, 2, NULL, &err);
    assert_non_null(strstr(err.msg, "no extension"));
    /* the extension in any case */
    write_ok(OUT "/upper.NPY", v, 1, 1, 2, 2, NULL);
    check_reads_back(OUT "/upper.NPY", v, 1, 1, 2, 2, NULL);
    assert_int_equal(attn_write_attention(OUT "/z.npy", v, 1, 0, 2, 2, NULL, &err), -ATTN_E_SHAPE);
    assert_int_equal(attn_write_attention(OUT "/z.npy", NULL, 1, 1, 2, 2, NULL, &err),
                     -ATTN_E_SHAPE);
    const char *holes[2] = {"a", NULL};
    assert_int_equal(attn_write_attention(OUT "/z.npz", v, 1, 1, 2, 2, holes, &err),
                     -ATTN_E_PARSE);
    assert_false(exists(OUT "/z.npy"));
    assert_false(exists(OUT "/z.npz"));
}

/* A missing folder, a directory in the way, a folder without write
 * permission (not as root): an error naming the path, nothing written. */
static void refuses_unwritable_places(void **state)
{
    (void)state;
    const char *exts[3] = {"npy", "npz", "safetensors"};
    mkdir(OUT "/ro", 0755);
    chmod(OUT "/ro", 0555);
    int ro = geteuid() != 0; /* root writes anywhere */
    for (int e = 0; e < 3; e++) {
        char paths[3][128];
        snprintf(paths[0], sizeof paths[0], OUT "/missing/sub/a.%s", exts[e]);
        snprintf(paths[1], sizeof paths[1], OUT "/adir.%s", exts[e]);
        snprintf(paths[2], sizeof paths[2], OUT "/ro/a.%s", exts[e]);
        mkdir(paths[1], 0755);
        for (int k = 0; k < 2 + ro; k++) {
            AttnErr err = {0};
            int rc = attn_write_attention(paths[k], values, L_, H_, T_, T_, tokens, &err);
            assert_int_equal(rc, -ATTN_E_IO);
            assert_string_equal(err.file, paths[k]);
            char line[1200];
            attn_err_format(&err, line, sizeof line);
            assert_non_null(strstr(line, paths[k]));
        }
        assert_false(exists(OUT "/missing"));
        assert_int_equal(count_named(OUT "/ro", "a."), 0);
        rmdir(paths[1]);
    }
    chmod(OUT "/ro", 0755);
    rmdir(OUT "/ro");
    assert_int_equal(count_named(OUT, ".tmp-"), 0);
}

/* ulimit -f: the write fails with the system's reason, no temp file is
 * left and the file already there is unchanged. */
static void full_file_size_limit(void **state)
{
    (void)state;
    static float big[64 * 64];
    for (int i = 0; i < 64 * 64; i++)
        big[i] = (float)i;
    const char *exts[3] = {"npy", "npz", "safetensors"};
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    for (int e = 0; e < 3; e++) {
        char path[128];
        snprintf(path, sizeof path, OUT "/limited.%s", exts[e]);
        float small[4] = {1, 2, 3, 4};
        const char *tok[2] = {"x", "y"};
        write_ok(path, small, 1, 1, 2, 2, tok);
        size_t len0, len1;
        char *before = test_slurp(path, &len0);
        lim = old;
        lim.rlim_cur = 4096;
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        AttnErr err = {0};
        int rc = attn_write_attention(path, big, 1, 1, 64, 64, NULL, &err);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        assert_int_equal(rc, -ATTN_E_IO);
        assert_string_equal(err.file, path);
        if (!strstr(err.msg, "File too large"))
            fail_msg("%s: %s", path, err.msg);
        assert_int_equal(count_named(OUT, ".tmp-"), 0);
        char *after = test_slurp(path, &len1);
        assert_int_equal(len0, len1);
        assert_memory_equal(before, after, len0);
        free(before);
        free(after);
        check_reads_back(path, small, 1, 1, 2, 2, e ? tok : NULL);
    }
    signal(SIGXFSZ, prev);
}

/* ---- attn_write_attention_maps ------------------------------------------- */

/* A source of maps: from an array (v) or by formula (v NULL), recording
 * how it is called; the call numbered fail_at returns fail_code. */
typedef struct Maps {
    const float *v;
    int L, H, Tq, Tk;
    int calls;         /* maps asked for */
    int wrong;         /* calls asking for another map than the next in order */
    int other_out;     /* calls with another out than the first's */
    float *first_out;
    int fail_at;       /* -1: none */
    int fail_code;
} Maps;

static Maps maps_of(const float *v, int L, int H, int Tq, int Tk)
{
    Maps m = {.v = v, .L = L, .H = H, .Tq = Tq, .Tk = Tk, .fail_at = -1};
    return m;
}

/* Distinct, not symmetric, a pattern no two maps share. */
static float formula(int l, int h, int i, int j)
{
    return (float)(l * 3 + h + 1) * 0.001f + (float)i / (float)(j + 2) - (float)((i * 7 + j) % 11);
}

static int maps_source(void *user, int l, int h, float *out)
{
    Maps *m = user;
    int k = m->calls++;
    m->wrong += l != k / m->H || h != k % m->H || k >= m->L * m->H;
    if (k == 0)
        m->first_out = out;
    m->other_out += out != m->first_out;
    if (k == m->fail_at)
        return m->fail_code;
    if (l < 0 || l >= m->L || h < 0 || h >= m->H)
        return -ATTN_E_RANGE;
    size_t mn = (size_t)m->Tq * (size_t)m->Tk;
    if (m->v) {
        memcpy(out, m->v + ((size_t)l * (size_t)m->H + (size_t)h) * mn, mn * sizeof *out);
        return 0;
    }
    for (int i = 0; i < m->Tq; i++)
        for (int j = 0; j < m->Tk; j++)
            out[(size_t)i * (size_t)m->Tk + (size_t)j] = formula(l, h, i, j);
    return 0;
}

static void write_maps_ok(const char *path, Maps *m, const char *const *tok)
{
    AttnErr err = {0};
    int rc = attn_write_attention_maps(path, maps_source, m, m->L, m->H, m->Tq, m->Tk, tok, &err);
    if (rc != 0)
        fail_msg("%s: %s", path, err.msg);
    assert_int_equal(m->calls, m->L * m->H);
    assert_int_equal(m->wrong, 0);
    assert_int_equal(m->other_out, 0);
    assert_int_equal(count_named(OUT, ".tmp-"), 0);
}

/* 1 when the two files hold the same bytes. */
static int same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    char *x = test_slurp(a, &na), *y = test_slurp(b, &nb);
    assert_non_null(x);
    assert_non_null(y);
    int same = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* Every format from the array and from the maps: the same bytes. A zip
 * holds its members' times (to 2 s), so an .npz pair may be written again
 * if a clock tick fell between the two; identical within 5 tries. */
static void maps_same_bytes_as_array(void **state)
{
    (void)state;
    static const struct { int L, H, Tq, Tk, tok; } shapes[] = {
        {L_, H_, T_, T_, 1}, {L_, H_, T_, T_, 0}, {1, 2, 3, 5, 0}, {3, 1, 1, 7, 0},
        {2, 2, 5, 3, 0},     {1, 1, 1, 1, 1},     {1, 1, 4, 4, 1}, {2, 2, 40, 40, 1},
        {1, 3, 100, 70, 0},
    };
    const char *exts[3] = {"npy", "npz", "safetensors"};
    const char *tk[40];
    for (int i = 0; i < 40; i++)
        tk[i] = tokens[i % T_];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int L = shapes[s].L, H = shapes[s].H, Tq = shapes[s].Tq, Tk = shapes[s].Tk;
        size_t n = (size_t)L * H * Tq * Tk;
        float *v = malloc(n * sizeof *v);
        assert_non_null(v);
        for (size_t i = 0; i < n; i++) /* the awkward values first, when there is room */
            v[i] = i < (size_t)N_ ? values[i] : (float)i * 0.37f - (float)(i % 13);
        for (int e = 0; e < 3; e++) {
            char a[128], b[128];
            snprintf(a, sizeof a, OUT "/same-array.%s", exts[e]);
            snprintf(b, sizeof b, OUT "/same-maps.%s", exts[e]);
            int same = 0;
            for (int tries = 0; tries < 5 && !same; tries++) {
                Maps m = maps_of(v, L, H, Tq, Tk);
                write_ok(a, v, L, H, Tq, Tk, shapes[s].tok ? tk : NULL);
                write_maps_ok(b, &m, shapes[s].tok ? tk : NULL);
                same = same_bytes(a, b);
            }
            if (!same)
                fail_msg("%d×%d×%d×%d .%s: the files differ", L, H, Tq, Tk, exts[e]);
            check_reads_back(b, v, L, H, Tq, Tk, shapes[s].tok && e ? tk : NULL);
        }
        free(v);
    }
}

/* The streamed .npz is the zip libzip writes from the members' bytes in
 * memory (stored, as before the maps came one at a time): attention.npy is
 * the .npy file's bytes, its CRC zlib's. */
static void npz_as_from_buffers(void **state)
{
    (void)state;
    const char *npy = OUT "/buffers.npy", *npz = OUT "/buffers.npz", *ref = OUT "/buffers-ref.npz";
    int same = 0;
    for (int tries = 0; tries < 5 && !same; tries++) {
        Maps m1 = maps_of(values, L_, H_, T_, T_), m2 = m1;
        write_maps_ok(npy, &m1, NULL);
        write_maps_ok(npz, &m2, tokens);
        size_t na, nt;
        int method;
        char *att = test_slurp(npy, &na);
        assert_non_null(att);
        char *tok = zip_member(npz, "tokens.npy", &nt, &method);
        int e = 0;
        zip_t *za = zip_open(npz, ZIP_RDONLY, &e);
        assert_non_null(za);
        zip_stat_t st;
        assert_int_equal(zip_stat(za, "attention.npy", 0, &st), 0);
        assert_int_equal(st.size, na);
        assert_int_equal(st.comp_size, na);
        assert_int_equal(st.comp_method, ZIP_CM_STORE);
        assert_int_equal(st.crc, crc32(0, (const Bytef *)att, (uInt)na));
        zip_discard(za);

        unlink(ref);
        za = zip_open(ref, ZIP_CREATE | ZIP_TRUNCATE, &e);
        assert_non_null(za);
        zip_source_t *s1 = zip_source_buffer(za, att, na, 0);
        zip_int64_t i1 = zip_file_add(za, "attention.npy", s1, 0);
        assert_true(i1 >= 0);
        assert_int_equal(zip_set_file_compression(za, (zip_uint64_t)i1, ZIP_CM_STORE, 0), 0);
        zip_source_t *s2 = zip_source_buffer(za, tok, nt, 0);
        zip_int64_t i2 = zip_file_add(za, "tokens.npy", s2, 0);
        assert_true(i2 >= 0);
        assert_int_equal(zip_set_file_compression(za, (zip_uint64_t)i2, ZIP_CM_STORE, 0), 0);
        assert_int_equal(zip_close(za), 0);
        same = same_bytes(npz, ref);
        free(att);
        free(tok);
    }
    assert_true(same);
    unlink(ref);
}

/* A source failing on the first, a middle or the last map, each format:
 * its code, err naming the path and the map, no more maps asked for,
 * nothing new and the file already there unchanged. */
static void failing_source_leaves_nothing(void **state)
{
    (void)state;
    const char *exts[3] = {"npy", "npz", "safetensors"};
    const int at[3] = {0, 3, L_ * H_ - 1};
    const int codes[4] = {-ATTN_E_CANCELLED, -ATTN_E_NOMEM, -ATTN_E_RANGE, 12345};
    for (int e = 0; e < 3; e++) {
        char fresh[128], old[128];
        snprintf(fresh, sizeof fresh, OUT "/failed.%s", exts[e]);
        snprintf(old, sizeof old, OUT "/kept.%s", exts[e]);
        float small[4] = {1, 2, 3, 4};
        const char *tok[2] = {"x", "y"};
        write_ok(old, small, 1, 1, 2, 2, tok);
        size_t len0, len1;
        char *before = test_slurp(old, &len0);
        assert_non_null(before);
        for (int k = 0; k < 3; k++) {
            for (int c = 0; c < 4; c++) {
                for (int which = 0; which < 2; which++) {
                    const char *path = which ? old : fresh;
                    unlink(fresh);
                    Maps m = maps_of(values, L_, H_, T_, T_);
                    m.fail_at = at[k];
                    m.fail_code = codes[c];
                    AttnErr err = {0};
                    int rc = attn_write_attention_maps(path, maps_source, &m, L_, H_, T_, T_,
                                                       e ? tokens : NULL, &err);
                    assert_int_equal(rc, codes[c] < 0 ? codes[c] : -ATTN_E_IO);
                    assert_int_equal(err.code, -rc);
                    assert_string_equal(err.file, path);
                    char where[64];
                    snprintf(where, sizeof where, "layer %d, head %d", at[k] / H_, at[k] % H_);
                    if (!strstr(err.msg, where))
                        fail_msg("%s: %s", path, err.msg);
                    assert_int_equal(m.calls, at[k] + 1);
                    assert_int_equal(m.wrong, 0);
                    assert_false(exists(fresh));
                    assert_int_equal(count_named(OUT, ".tmp-"), 0);
                }
            }
        }
        char *after = test_slurp(old, &len1);
        assert_non_null(after);
        assert_int_equal(len0, len1);
        assert_memory_equal(before, after, len0);
        free(before);
        free(after);
        check_reads_back(old, small, 1, 1, 2, 2, e ? tok : NULL);
    }
}

/* The checks come before any map is asked for: no source, an extension
 * not known, a token list for Tq ≠ Tk, a missing token. */
static void maps_refuse_bad_arguments(void **state)
{
    (void)state;
    const char *tok[3] = {"a", "b", "c"}, *holes[2] = {"a", NULL};
    AttnErr err = {0};
    Maps m = maps_of(values, 1, 2, 3, 5);
    assert_int_equal(attn_write_attention_maps(OUT "/m.npz", NULL, &m, 1, 2, 3, 5, NULL, &err),
                     -ATTN_E_SHAPE);
    assert_non_null(strstr(err.msg, "without numbers"));
    assert_int_equal(attn_write_attention_maps(OUT "/m.txt", maps_source, &m, 1, 2, 3, 5, NULL,
                                               &err),
                     -ATTN_E_PARSE);
    assert_non_null(strstr(err.msg, ".npy, .npz or .safetensors"));
    assert_int_equal(attn_write_attention_maps(OUT "/m.npz", maps_source, &m, 1, 2, 3, 5, tok,
                                               &err),
                     -ATTN_E_SHAPE);
    assert_non_null(strstr(err.msg, "3×5"));
    assert_int_equal(attn_write_attention_maps(OUT "/m.safetensors", maps_source, &m, 1, 0, 3, 5,
                                               NULL, &err),
                     -ATTN_E_SHAPE);
    Maps sq = maps_of(values, 1, 1, 2, 2);
    assert_int_equal(attn_write_attention_maps(OUT "/m.npz", maps_source, &sq, 1, 1, 2, 2, holes,
                                               &err),
                     -ATTN_E_PARSE);
    assert_int_equal(m.calls + sq.calls, 0);
    assert_false(exists(OUT "/m.npz"));
    assert_false(exists(OUT "/m.txt"));
    assert_false(exists(OUT "/m.safetensors"));
}

/* 2×3×300×300 made by a formula a map at a time: no L×H×T×T array exists
 * on either side (the writer holds one map: every call gets the same out),
 * each format read back value for value. */
static void maps_by_formula(void **state)
{
    (void)state;
    enum { L = 2, H = 3, T = 300 };
    static char names[T][8];
    const char *tk[T];
    for (int i = 0; i < T; i++) {
        snprintf(names[i], sizeof names[i], "t%d", i);
        tk[i] = names[i];
    }
    const char *exts[3] = {"npy", "npz", "safetensors"};
    for (int e = 0; e < 3; e++) {
        char path[128];
        snprintf(path, sizeof path, OUT "/formula.%s", exts[e]);
        Maps m = maps_of(NULL, L, H, T, T);
        write_maps_ok(path, &m, e ? tk : NULL);
        AttnFile f;
        AttnErr err = {0};
        if (attn_file_open(&f, path, &err) != 0)
            fail_msg("%s: %s", path, err.msg);
        assert_int_equal(f.L, L);
        assert_int_equal(f.H, H);
        assert_int_equal(f.Tq, T);
        assert_int_equal(f.Tk, T);
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < T; i++)
                    for (int j = 0; j < T; j++) {
                        float x = attn_file_at(&f, l, h, i, j), y = formula(l, h, i, j);
                        if (memcmp(&x, &y, 4) != 0)
                            fail_msg("%s: (%d,%d,%d,%d) is %g, wrote %g", path, l, h, i, j,
                                     (double)x, (double)y);
                    }
        if (e) {
            assert_non_null(f.q_tokens);
            assert_string_equal(f.q_tokens[T - 1], "t299");
        }
        attn_file_close(&f);
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_npy),
        cmocka_unit_test(writes_npz),
        cmocka_unit_test(writes_safetensors),
        cmocka_unit_test(writes_expectation),
        cmocka_unit_test(cleans_invalid_utf8),
        cmocka_unit_test(cross_and_no_tokens),
        cmocka_unit_test(refuses_bad_arguments),
        cmocka_unit_test(refuses_unwritable_places),
        cmocka_unit_test(full_file_size_limit),
        cmocka_unit_test(maps_same_bytes_as_array),
        cmocka_unit_test(npz_as_from_buffers),
        cmocka_unit_test(failing_source_leaves_nothing),
        cmocka_unit_test(maps_refuse_bad_arguments),
        cmocka_unit_test(maps_by_formula),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
