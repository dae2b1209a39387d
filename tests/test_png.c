/* Tests for png_write (src/io/png.c) on raw buffers, no SDL: each file is
 * decoded here on its own (CRCs, zlib, all five filters) and compared pixel
 * for pixel; small, one-pixel and two-thread images, and the errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "attnviz/png.h"
#include "attnviz/prng.h"

#include "test_util.h"

/* ---- an independent decoder ---------------------------------------------- */

typedef struct Decoded {
    int w, h;
    unsigned char *rgb;   /* w·h·3 bytes */
    unsigned char *filters; /* the filter type of each row */
} Decoded;

static uint32_t get32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Decode an 8-bit RGB, non-interlaced PNG file; fails the test on anything
 * else or on a damaged file. */
static void png_decode(const char *path, Decoded *out)
{
    size_t len;
    unsigned char *f = (unsigned char *)test_slurp(path, &len);
    assert_non_null(f);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    assert_true(len >= 8);
    assert_memory_equal(f, sig, 8);
    unsigned char *idat = NULL;
    size_t n_idat = 0, pos = 8;
    int seen_end = 0, w = 0, h = 0;
    while (!seen_end) {
        assert_true(pos + 12 <= len);
        uint32_t n = get32(f + pos);
        assert_true(n <= len - pos - 12);
        const unsigned char *type = f + pos + 4, *data = f + pos + 8;
        uLong crc = crc32(crc32(0L, type, 4), data, n);
        assert_int_equal(get32(data + n), (uint32_t)crc);
        if (memcmp(type, "IHDR", 4) == 0) {
            assert_int_equal(n, 13);
            w = (int)get32(data);
            h = (int)get32(data + 4);
            assert_int_equal(data[8], 8);  /* bits */
            assert_int_equal(data[9], 2);  /* RGB */
            assert_int_equal(data[10], 0); /* deflate */
            assert_int_equal(data[11], 0); /* adaptive filters */
            assert_int_equal(data[12], 0); /* no interlace */
        } else if (memcmp(type, "IDAT", 4) == 0) {
            idat = realloc(idat, n_idat + n + 1);
            assert_non_null(idat);
            memcpy(idat + n_idat, data, n);
            n_idat += n;
        } else if (memcmp(type, "IEND", 4) == 0) {
            seen_end = 1;
        }
        pos += 12 + n;
    }
    assert_int_equal(pos, len);
    assert_true(w > 0 && h > 0);
    size_t rowlen = 1 + (size_t)w * 3;
    uLongf raw_len = (uLongf)(rowlen * h);
    unsigned char *raw = malloc(raw_len + 1);
    assert_non_null(raw);
    uLongf got = raw_len + 1; /* one more: a longer stream shows */
    assert_int_equal(uncompress(raw, &got, idat, (uLong)n_idat), Z_OK);
    assert_int_equal(got, raw_len);
    out->w = w;
    out->h = h;
    out->rgb = malloc((size_t)w * h * 3);
    out->filters = malloc((size_t)h);
    assert_non_null(out->rgb);
    assert_non_null(out->filters);
    for (int y = 0; y < h; y++) {
        const unsigned char *r = raw + (size_t)y * rowlen;
        unsigned char *o = out->rgb + (size_t)y * w * 3;
        const unsigned char *up = y ? o - (size_t)w * 3 : NULL;
        out->filters[y] = r[0];
        assert_true(r[0] <= 4);
        for (int i = 0; i < w * 3; i++) {
            int a = i >= 3 ? o[i - 3] : 0, b = up ? up[i] : 0, c = up && i >= 3 ? up[i - 3] : 0;
            int pred = r[0] == 0 ? 0 : r[0] == 1 ? a : r[0] == 2 ? b
                     : r[0] == 3 ? (a + b) / 2 : paeth(a, b, c);
            o[i] = (unsigned char)(r[1 + i] + pred);
        }
    }
    free(raw);
    free(idat);
    free(f);
}

static void decoded_free(Decoded *d)
{
    free(d->rgb);
    free(d->filters);
}

/* The decoded image is the w×h image at px (stride in bytes). */
static void assert_pixels(const Decoded *d, int w, int h, const void *px, int stride)
{
    assert_int_equal(d->w, w);
    assert_int_equal(d->h, h);
    int bad = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t c = ((const uint32_t *)((const char *)px + (size_t)y * stride))[x];
            const unsigned char *o = d->rgb + ((size_t)y * w + x) * 3;
            if (o[0] != ((c >> 16) & 0xFF) || o[1] != ((c >> 8) & 0xFF) || o[2] != (c & 0xFF)) {
                if (bad++ < 5)
                    print_error("pixel (%d, %d): %02x%02x%02x, want %06x\n", x, y, o[0], o[1],
                                o[2], (unsigned)(c & 0xFFFFFF));
            }
        }
    assert_int_equal(bad, 0);
}

static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char buf[512];
    snprintf(buf, sizeof buf, "%s/attnviz-png-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(buf);
    assert_non_null(d);
    return strdup(d);
}

static void rm_file_dir(char *dir, const char *file)
{
    char p[1100];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    unlink(p);
    rmdir(dir);
    free(dir);
}

/* ---- tests ----------------------------------------------------------------- */

/* 7×5 with rows 4 bytes·3 longer than the pixels (padding of junk), a junk
 * top byte in every pixel, every colour different in x and y (a transposed
 * or mirrored image fails), rows 2 and 3 equal (the UP filter) and row 4
 * equal to row 3 but in one pixel. */
static void test_small_image(void **state)
{
    (void)state;
    enum { W = 7, H = 5, STRIDE = 4 * W + 12 };
    uint32_t buf[H * STRIDE / 4];
    memset(buf, 0xEE, sizeof buf);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int yy = y == 3 ? 2 : y == 4 ? 2 : y;
            uint32_t c = (uint32_t)(x * 37 + yy * 5) << 16 | (uint32_t)(255 - x * 3 - yy * 40) << 8 |
                         (uint32_t)(x * yy * 11 + 1);
            buf[y * (STRIDE / 4) + x] = 0xAB000000u | c;
        }
    buf[4 * (STRIDE / 4) + 6] ^= 0x00010203u;
    char *dir = make_tmpdir();
    char path[1100];
    snprintf(path, sizeof path, "%s/small.png", dir);
    AttnErr err = {0};
    assert_int_equal(png_write(path, W, H, buf, STRIDE, &err), 0);
    Decoded d;
    png_decode(path, &d);
    assert_pixels(&d, W, H, buf, STRIDE);
    /* the filters the encoder promises: SUB, UP for a repeated row */
    static const unsigned char want[H] = {1, 1, 1, 2, 1};
    assert_memory_equal(d.filters, want, H);
    decoded_free(&d);
    /* the same image gives the same bytes; nothing else is left in dir */
    size_t l1, l2;
    char *a = test_slurp(path, &l1);
    assert_int_equal(png_write(path, W, H, buf, STRIDE, &err), 0);
    char *b = test_slurp(path, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    free(a);
    free(b);
    assert_int_equal(test_count_entries(dir), 1);
    rm_file_dir(dir, "small.png");
}

static void test_one_pixel(void **state)
{
    (void)state;
    uint32_t px = 0x00123456u;
    char *dir = make_tmpdir();
    char path[1100];
    snprintf(path, sizeof path, "%s/one.png", dir);
    AttnErr err = {0};
    assert_int_equal(png_write(path, 1, 1, &px, 4, &err), 0);
    Decoded d;
    png_decode(path, &d);
    assert_pixels(&d, 1, 1, &px, 4);
    decoded_free(&d);
    rm_file_dir(dir, "one.png");
}

/* Large enough for two threads: bands of repeated rows (a heatmap's cells),
 * noise, and an odd height so that the halves differ in size. */
static void test_large_two_threads(void **state)
{
    (void)state;
    int w = 701, h = 523;
    assert_true((size_t)h * (1 + (size_t)w * 3) >= PNG_SPLIT_BYTES);
    uint32_t *px = malloc((size_t)w * h * 4);
    assert_non_null(px);
    Prng r;
    prng_seed(&r, 42);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t c;
            if (y < h / 3)
                c = (uint32_t)((x / 40) * 29 % 256) << 16 | (uint32_t)((y / 16) * 53 % 256) << 8 | 0x80;
            else if (y < 2 * h / 3)
                c = (uint32_t)prng_next(&r);
            else
                c = (uint32_t)(x & 0xFF) << 8 | (uint32_t)(y & 0xFF);
            px[(size_t)y * w + x] = c & 0x00FFFFFFu;
        }
    char *dir = make_tmpdir();
    char path[1100];
    snprintf(path, sizeof path, "%s/large.png", dir);
    AttnErr err = {0};
    assert_int_equal(png_write(path, w, h, px, w * 4, &err), 0);
    Decoded d;
    png_decode(path, &d);
    assert_pixels(&d, w, h, px, w * 4);
    int up = 0;
    for (int y = 0; y < h; y++)
        up += d.filters[y] == 2;
    assert_true(up > h / 4); /* the banded third is mostly UP rows */
    decoded_free(&d);
    free(px);
    rm_file_dir(dir, "large.png");
}

static void test_errors(void **state)
{
    (void)state;
    uint32_t px[4] = {0};
    AttnErr err = {0};
    char *dir = make_tmpdir();
    char path[1100];
    /* a missing folder: an I/O error naming the file, nothing written */
    snprintf(path, sizeof path, "%s/no/such/folder/x.png", dir);
    assert_int_equal(png_write(path, 2, 2, px, 8, &err), -ATTN_E_IO);
    assert_int_equal(err.code, ATTN_E_IO);
    assert_string_equal(err.file, path);
    assert_int_equal(test_count_entries(dir), 0);
    /* a folder where the file should be */
    memset(&err, 0, sizeof err);
    assert_int_equal(png_write(dir, 2, 2, px, 8, &err), -ATTN_E_IO);
    assert_int_equal(test_count_entries(dir), 0);
    /* bad arguments: nothing is created */
    snprintf(path, sizeof path, "%s/x.png", dir);
    assert_int_equal(png_write(path, 0, 2, px, 8, &err), -ATTN_E_RANGE);
    assert_int_equal(png_write(path, 2, 0, px, 8, &err), -ATTN_E_RANGE);
    assert_int_equal(png_write(path, 2, 2, NULL, 8, &err), -ATTN_E_RANGE);
    assert_int_equal(png_write(path, 2, 2, px, 4, &err), -ATTN_E_RANGE);
    assert_int_equal(png_write(path, 2, 2, px, 10, &err), -ATTN_E_RANGE);
    assert_int_equal(png_write(path, 2, 2, (const char *)px + 1, 8, &err), -ATTN_E_RANGE);
    assert_int_equal(png_write(path, 30000, 30000, px, 120000, &err), -ATTN_E_TOO_LARGE);
    assert_int_equal(test_count_entries(dir), 0);
    /* an existing file survives a failed write */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("old", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(png_write(path, 2, 2, px, 2, &err), -ATTN_E_RANGE);
    size_t len;
    char *old = test_slurp(path, &len);
    assert_string_equal(old, "old");
    free(old);
    assert_int_equal(test_count_entries(dir), 1);
    rm_file_dir(dir, "x.png");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_image),
        cmocka_unit_test(test_one_pixel),
        cmocka_unit_test(test_large_two_threads),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
