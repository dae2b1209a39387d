/* attn_write_attention (attn_write.h): each format written from a small
 * array that is not symmetric (with -0, NaN with a payload, ±inf and a
 * subnormal) and awkward tokens, opened again by the project's own reader
 * (attn_file_open) with every value compared bit for bit and the tokens
 * equal; the bytes of each format's header; invalid UTF-8; the errors (an
 * unknown extension, a missing or read-only folder, a full file-size limit)
 * leaving nothing behind. The three files and expect.json stay in
 * build/test-out/attn_write/ for tests/attn_write_numpy.sh (numpy reads
 * them). */
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
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
