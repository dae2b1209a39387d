/* The PNG encoder (see attnviz/png.h): RGB rows from 32-bit pixels,
 * filtered and deflated by zlib on one or two threads, written through
 * io_write_atomic. No SDL. */
#include "attnviz/png.h"
#include "attnviz/background.h"
#include "attnviz/io.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* RGB rows with the SUB filter (UP for a row equal to the one above),
 * deflated by zlib at level 1 (a heatmap's flat cells become runs of
 * zeros), in two halves on two threads for large images: the first half ends with a
 * sync flush, the second starts afresh, and their Adler-32 sums combine.
 * Written here rather than through IMG_SavePNG, which tries every filter at
 * level 6 and made encoding most of an export's run time. */

/* The image as png_write was given it. */
typedef struct PngImage {
    int w, h;
    const uint8_t *pixels;
    size_t stride;
} PngImage;

typedef struct PngPart {
    const PngImage *img;
    int y0, y1, last;
    unsigned char *out;   /* raw deflate stream of this part */
    size_t len, cap;
    uLong adler;          /* of the filtered bytes */
    int failed;
} PngPart;

static int part_grow(PngPart *p, size_t need)
{
    if (need <= p->cap)
        return 0;
    size_t cap = p->cap ? p->cap : 65536;
    while (cap < need)
        cap += cap / 2;
    unsigned char *o = realloc(p->out, cap);
    if (!o)
        return -1;
    p->out = o;
    p->cap = cap;
    return 0;
}

static void *png_part(void *arg)
{
    PngPart *p = arg;
    const PngImage *s = p->img;
    size_t rowlen = 1 + (size_t)s->w * 3;
    unsigned char *row = malloc(rowlen);
    z_stream z;
    memset(&z, 0, sizeof z);
    p->adler = adler32(0L, Z_NULL, 0);
    if (!row || deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(row);
        p->failed = 1;
        return NULL;
    }
    for (int y = p->y0; y < p->y1 && !p->failed; y++) {
        const uint32_t *px = (const uint32_t *)(s->pixels + (size_t)y * s->stride);
        unsigned char *o = row + 1;
        if (y > 0 && memcmp(px, (const uint8_t *)px - s->stride, (size_t)s->w * 4) == 0) {
            /* a row like the one above (a heatmap cell is several rows
             * tall): the UP filter makes it all zeros, cheap to deflate */
            row[0] = 2;
            memset(o, 0, (size_t)s->w * 3);
        } else {
            /* XRGB pixels to R, G, B bytes, each minus the pixel to its left */
            row[0] = 1; /* SUB */
            uint32_t prev = 0;
            for (int x = 0; x < s->w; x++) {
                uint32_t c = px[x];
                o[3 * x] = (unsigned char)((c >> 16) - (prev >> 16));
                o[3 * x + 1] = (unsigned char)((c >> 8) - (prev >> 8));
                o[3 * x + 2] = (unsigned char)(c - prev);
                prev = c;
            }
        }
        p->adler = adler32(p->adler, row, (uInt)rowlen);
        int flush = y + 1 < p->y1 ? Z_NO_FLUSH : p->last ? Z_FINISH : Z_SYNC_FLUSH;
        z.next_in = row;
        z.avail_in = (uInt)rowlen;
        for (;;) {
            if (part_grow(p, p->len + 65536) < 0) {
                p->failed = 1;
                break;
            }
            z.next_out = p->out + p->len;
            z.avail_out = (uInt)(p->cap - p->len);
            int rc = deflate(&z, flush);
            p->len = p->cap - z.avail_out;
            if (rc == Z_STREAM_ERROR) {
                p->failed = 1;
                break;
            }
            /* done when deflate left output space (Z_FINISH: at stream end) */
            if (flush == Z_FINISH ? rc == Z_STREAM_END : z.avail_out != 0)
                break;
        }
    }
    deflateEnd(&z);
    free(row);
    return NULL;
}

static void put32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

/* One chunk: length, type, data, CRC of type and data. */
static int chunk(FILE *f, const char *type, const unsigned char *data, size_t len)
{
    unsigned char head[8], crc[4];
    put32(head, (uint32_t)len);
    memcpy(head + 4, type, 4);
    uLong c = crc32(0L, (const Bytef *)type, 4);
    if (len)
        c = crc32(c, data, (uInt)len);
    put32(crc, (uint32_t)c);
    return fwrite(head, 1, 8, f) == 8 && (!len || fwrite(data, 1, len, f) == len) &&
                   fwrite(crc, 1, 4, f) == 4
               ? 0
               : -1;
}

static int write_png(FILE *f, const PngImage *img)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    size_t raw = (size_t)img->h * (1 + (size_t)img->w * 3);
    /* (not where this thread may not wait: the browser's main thread) */
    int halves = raw >= PNG_SPLIT_BYTES && img->h >= 2 && bg_may_wait() ? 2 : 1;
    PngPart part[2];
    memset(part, 0, sizeof part);
    for (int k = 0; k < halves; k++) {
        part[k].img = img;
        part[k].y0 = k * img->h / halves;
        part[k].y1 = (k + 1) * img->h / halves;
        part[k].last = k == halves - 1;
    }
    pthread_t t;
    int threaded = halves == 2 && pthread_create(&t, NULL, png_part, &part[0]) == 0;
    if (halves == 2 && !threaded)
        png_part(&part[0]);
    png_part(&part[halves - 1]);
    if (threaded)
        pthread_join(t, NULL);

    int rc = -1;
    if (part[0].failed || part[1].failed)
        goto cleanup;
    uLong adler = part[0].adler;
    if (halves == 2)
        adler = adler32_combine(adler, part[1].adler,
                                (z_off_t)((size_t)(part[1].y1 - part[1].y0) * (1 + (size_t)img->w * 3)));
    unsigned char ihdr[13];
    put32(ihdr, (uint32_t)img->w);
    put32(ihdr + 4, (uint32_t)img->h);
    ihdr[8] = 8;  /* bits per channel */
    ihdr[9] = 2;  /* RGB */
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filters, no interlace */
    if (fwrite(sig, 1, 8, f) != 8 || chunk(f, "IHDR", ihdr, 13) != 0)
        goto cleanup;
    /* one IDAT written in pieces: zlib header, the parts, Adler-32; its CRC
     * runs over them in the same order */
    unsigned char zhead[2] = {0x78, 0x01}; /* deflate, 32 KiB window, fastest */
    unsigned char head[8], tail[4], crc[4];
    size_t n = 2 + part[0].len + part[1].len + 4;
    put32(head, (uint32_t)n);
    memcpy(head + 4, "IDAT", 4);
    put32(tail, (uint32_t)adler);
    uLong c = crc32(0L, head + 4, 4);
    c = crc32(c, zhead, 2);
    for (int k = 0; k < halves; k++)
        c = crc32(c, part[k].out, (uInt)part[k].len);
    c = crc32(c, tail, 4);
    put32(crc, (uint32_t)c);
    if (fwrite(head, 1, 8, f) != 8 || fwrite(zhead, 1, 2, f) != 2)
        goto cleanup;
    for (int k = 0; k < halves; k++)
        if (fwrite(part[k].out, 1, part[k].len, f) != part[k].len)
            goto cleanup;
    if (fwrite(tail, 1, 4, f) == 4 && fwrite(crc, 1, 4, f) == 4 && chunk(f, "IEND", NULL, 0) == 0)
        rc = 0;
cleanup:
    free(part[0].out);
    free(part[1].out);
    return rc;
}

static int png_writer(FILE *f, void *ctx)
{
    return write_png(f, ctx);
}

int png_write(const char *path, int w, int h, const void *pixels, int stride,
              AttnErr *err)
{
    if (!pixels || w < 1 || h < 1 || stride < 0 || (size_t)stride < (size_t)w * 4 ||
        stride % 4 != 0 || (uintptr_t)pixels % 4 != 0)
        return attn_err_set(err, ATTN_E_RANGE, path, 0,
                            "cannot write a PNG of %d×%d pixels with rows %d bytes apart", w, h,
                            stride);
    if ((size_t)h * (1 + (size_t)w * 3) > PNG_MAX_BYTES)
        return attn_err_set(err, ATTN_E_TOO_LARGE, path, 0, "image of %d×%d pixels is too large",
                            w, h);
    PngImage img = {w, h, pixels, (size_t)stride};
    return io_write_atomic(path, png_writer, &img, err);
}
