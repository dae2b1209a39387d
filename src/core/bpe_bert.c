/* BERT's character classes as Hugging Face's tokenizers have them
 * (bpe_bert.h): the reference's tables (bpe_bert_tab.inc), searched. Not
 * the normalizer or pre-tokenizer steps themselves (bpe_pre.c). */
#include "bpe_bert.h"

#include <stddef.h>
#include <stdint.h>

#include "bpe_unicode.h"

#include "bpe_bert_tab.inc"

#define COUNT(a) (sizeof(a) / sizeof(a)[0])

/* 1 when cp is in the sorted ranges r[0..n). */
static int in_ranges(const BpeRange *r, size_t n, unsigned cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid].lo)
            hi = mid;
        else if (cp > r[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

int bpe_bert_is(int cls, unsigned cp)
{
    static const struct {
        const BpeRange *r;
        size_t n;
    } t[] = {
        [BPE_BERT_DROP] = {bert_drop, COUNT(bert_drop)},
        [BPE_BERT_TO_SPACE] = {bert_to_space, COUNT(bert_to_space)},
        [BPE_BERT_MARK] = {bert_mark, COUNT(bert_mark)},
        [BPE_BERT_SPACE] = {bert_space, COUNT(bert_space)},
        [BPE_BERT_PUNCT] = {bert_punct, COUNT(bert_punct)},
        [BPE_BERT_WS_WORD] = {ws_word, COUNT(ws_word)},
        [BPE_BERT_WS_SPACE] = {ws_space, COUNT(ws_space)},
    };
    if (cls < 0 || cls >= (int)COUNT(t))
        return 0;
    return in_ranges(t[cls].r, t[cls].n, cp);
}

int bpe_bert_chinese(unsigned cp)
{
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

int bpe_bert_lower(unsigned cp, unsigned out[2])
{
    size_t lo = 0, hi = COUNT(bert_lower);
    out[0] = cp;
    out[1] = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < bert_lower[mid][0]) {
            hi = mid;
        } else if (cp > bert_lower[mid][0]) {
            lo = mid + 1;
        } else {
            out[0] = bert_lower[mid][1];
            out[1] = bert_lower[mid][2];
            break;
        }
    }
    return out[1] ? 2 : 1;
}
