/* libFuzzer target: gguf_vocab_build on arrays made from the input, then
 * bpe_encode_template and bpe_decode on a text from it. Input (capped at
 * 4 KiB): a flags byte (model, pre, add_bos, add_space_prefix, Phi-3's name,
 * scores), then items separated by NUL bytes up to an empty item, then the
 * text. Each item is a type byte (its low three bits the token type, its top
 * bit: a merge "a b" rather than a token) and its text. Every byte's token
 * comes first (byte-level characters, or <0xNN>), so any text encodes.
 * Checks: the build succeeds, or fails with a message and no Bpe; every id of
 * the text a token, the same ids twice; both decodings and every token's
 * display text of the length they say. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/gguf_vocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ITEMS 512

static const char *check(const uint8_t *data, size_t size)
{
    static const char *const pres[] = {"gpt-2", "llama-bpe", "qwen2", "smollm", "default", NULL,
                                       "dbrx", "nope"};
    static char bytes[256][8];
    const char *tok[256 + MAX_ITEMS], *mg[MAX_ITEMS];
    size_t lens[256 + MAX_ITEMS], mlens[MAX_ITEMS];
    int32_t types[256 + MAX_ITEMS];
    float scores[256 + MAX_ITEMS];
    if (size < 1 || size > 4096)
        return NULL;
    unsigned f = data[0];
    int spm = f & 1, n = 0, nm = 0;
    for (int b = 0; b < 256; b++) { /* every byte's token */
        if (spm)
            snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        else
            bytes[b][bpe_byte_char((unsigned char)b, bytes[b])] = '\0';
        tok[n] = bytes[b];
        lens[n] = strlen(bytes[b]);
        types[n] = spm ? GGUF_TOKEN_BYTE : GGUF_TOKEN_NORMAL;
        scores[n] = 0.0f;
        n++;
    }
    size_t pos = 1;
    while (pos < size && n < 256 + MAX_ITEMS) {
        const uint8_t *end = memchr(data + pos, 0, size - pos);
        size_t len = end ? (size_t)(end - (data + pos)) : size - pos;
        if (len == 0) {
            pos++;
            break;
        }
        unsigned ty = data[pos];
        if ((ty & 0x80) && nm < MAX_ITEMS) {
            mg[nm] = (const char *)data + pos + 1;
            mlens[nm++] = len - 1;
        } else if (!(ty & 0x80)) {
            tok[n] = (const char *)data + pos + 1;
            lens[n] = len - 1;
            types[n] = (int32_t)(ty & 7);
            scores[n] = (float)(int)(ty >> 3 & 7) - (float)n;
            n++;
        }
        pos += len + 1;
    }
    const char *text = (const char *)data + (pos < size ? pos : size);
    size_t tn = size - (size_t)(text - (const char *)data);
    GgufVocab v = {.model = spm ? "llama" : "gpt2", .pre = pres[f >> 1 & 7], .n_tokens = n,
                   .tokens = tok, .token_lens = lens, .scores = f & 0x80 ? scores : NULL,
                   .types = types, .n_merges = nm, .merges = mg, .merge_lens = mlens,
                   .bos_id = n - 1, .eos_id = -1, .unk_id = -1, .pad_id = -1,
                   .add_bos = f & 0x10 ? 1 : -1, .add_eos = -1,
                   .add_space_prefix = f & 0x20 ? 1 : -1, .name = f & 0x40 ? "Phi-3" : NULL};
    Bpe *b = (Bpe *)&v;
    AttnErr err = {0};
    if (gguf_vocab_build(&b, &v, &err) < 0)
        return b ? "a refused vocabulary left a Bpe" : !err.msg[0] ? "an error without a message"
                                                                   : NULL;
    const char *bad = NULL;
    BpeIds a = {0}, c = {0};
    if (bpe_encode_template(b, text, tn, &a) < 0 || bpe_encode_template(b, text, tn, &c) < 0)
        bad = "out of memory";
    else if (a.n != c.n || (a.n && memcmp(a.id, c.id, (size_t)a.n * sizeof *a.id) != 0))
        bad = "two encodings differ";
    for (int i = 0; !bad && i < a.n; i++)
        if (a.id[i] < 0 || a.id[i] >= n)
            bad = "an id outside the vocabulary";
    for (int skip = 0; !bad && skip < 2; skip++) {
        char *d = NULL;
        size_t dn = 0;
        if (bpe_decode(b, a.id, a.n, skip, &d, &dn) < 0)
            bad = "out of memory";
        else if (strlen(d) > dn)
            bad = "a decoding longer than it says";
        free(d);
    }
    for (int i = 0; !bad && i < a.n; i++) {
        char label[64];
        size_t need = bpe_token_text(b, a.id[i], NULL, label, sizeof label);
        if (need < sizeof label && strlen(label) != need)
            bad = "a display text not of its length";
    }
    bpe_ids_free(&a);
    bpe_ids_free(&c);
    bpe_destroy(b);
    return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = check(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_gguf_vocab: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
