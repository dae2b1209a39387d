/* Categories and normalization as Hugging Face's tokenizers have them: the
 * generated table (bpe_unicode_tab.inc) beside utf8proc's. */
#include "bpe_unicode.h"

#include <string.h>
#include <utf8proc.h>

#include "bpe_unicode_tab.inc"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const BpeCatFix *bpe_cat_fixes(size_t *n)
{
    *n = COUNT(cat_fix);
    return cat_fix;
}

const BpeRange *bpe_word_extra(size_t *n)
{
    *n = COUNT(word_extra);
    return word_extra;
}

int bpe_ucat(unsigned cp)
{
    if (cp > 0x10FFFF)
        return 0;
    if (cp >= cat_fix[0].lo) {
        size_t lo = 0, hi = COUNT(cat_fix);
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cp < cat_fix[mid].lo)
                hi = mid;
            else if (cp > cat_fix[mid].hi)
                lo = mid + 1;
            else
                return cat_fix[mid].cat;
        }
    }
    return (int)utf8proc_category((utf8proc_int32_t)cp);
}

int bpe_norm_barrier(unsigned cp)
{
    size_t lo = 0, hi = COUNT(norm_barrier);
    if (cp < norm_barrier[0].lo)
        return 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < norm_barrier[mid].lo)
            hi = mid;
        else if (cp > norm_barrier[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

#define B(c) (1u << UTF8PROC_CATEGORY_##c)
#define MASK_L (B(LU) | B(LL) | B(LT) | B(LM) | B(LO))
#define MASK_M (B(MN) | B(MC) | B(ME))
#define MASK_N (B(ND) | B(NL) | B(NO))
#define MASK_P (B(PC) | B(PD) | B(PS) | B(PE) | B(PI) | B(PF) | B(PO))
#define MASK_S (B(SM) | B(SC) | B(SK) | B(SO))
#define MASK_Z (B(ZS) | B(ZL) | B(ZP))
#define MASK_C (B(CC) | B(CF) | B(CS) | B(CO) | B(CN))

uint32_t bpe_prop_cats(const char *name, size_t n)
{
    static const struct {
        const char *name;
        uint32_t mask;
    } t[] = {
        {"L", MASK_L}, {"Letter", MASK_L}, {"M", MASK_M}, {"Mark", MASK_M},
        {"N", MASK_N}, {"Number", MASK_N}, {"P", MASK_P}, {"Punctuation", MASK_P},
        {"S", MASK_S}, {"Symbol", MASK_S}, {"Z", MASK_Z}, {"Separator", MASK_Z},
        {"C", MASK_C}, {"Other", MASK_C}, {"LC", B(LU) | B(LL) | B(LT)},
        {"Lu", B(LU)}, {"Ll", B(LL)}, {"Lt", B(LT)}, {"Lm", B(LM)}, {"Lo", B(LO)},
        {"Mn", B(MN)}, {"Mc", B(MC)}, {"Me", B(ME)}, {"Nd", B(ND)}, {"Nl", B(NL)},
        {"No", B(NO)}, {"Pc", B(PC)}, {"Pd", B(PD)}, {"Ps", B(PS)}, {"Pe", B(PE)},
        {"Pi", B(PI)}, {"Pf", B(PF)}, {"Po", B(PO)}, {"Sm", B(SM)}, {"Sc", B(SC)},
        {"Sk", B(SK)}, {"So", B(SO)}, {"Zs", B(ZS)}, {"Zl", B(ZL)}, {"Zp", B(ZP)},
        {"Cc", B(CC)}, {"Cf", B(CF)}, {"Cs", B(CS)}, {"Co", B(CO)}, {"Cn", B(CN)},
    };
    for (size_t i = 0; i < COUNT(t); i++)
        if (strlen(t[i].name) == n && memcmp(t[i].name, name, n) == 0)
            return t[i].mask;
    return 0;
}
