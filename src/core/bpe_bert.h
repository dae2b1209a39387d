/* How Hugging Face's tokenizers class a code point in BERT's pipeline
 * (BertNormalizer, BertPreTokenizer, Whitespace): its own tables, asked of
 * the reference (bpe_bert_tab.inc, by tools/gen_bert_unicode.js), as they
 * are of several Unicode versions. Internal to the core (bpe_pre.c). */
#ifndef ATTNVIZ_BPE_BERT_H
#define ATTNVIZ_BPE_BERT_H

enum {
    BPE_BERT_DROP,      /* clean_text drops it */
    BPE_BERT_TO_SPACE,  /* clean_text makes it a space */
    BPE_BERT_MARK,      /* strip_accents drops it (after NFD) */
    BPE_BERT_SPACE,     /* BertPreTokenizer and WhitespaceSplit split at it (dropped) */
    BPE_BERT_PUNCT,     /* BertPreTokenizer isolates it */
    BPE_BERT_WS_WORD,   /* Whitespace's word character (its \w) */
    BPE_BERT_WS_SPACE   /* Whitespace drops it (its \s) */
};

/* 1 when code point cp is in the class (BPE_BERT_*). */
int bpe_bert_is(int cls, unsigned cp);
/* handle_chinese_chars' is_chinese_char: the CJK Unified Ideographs blocks
 * and the compatibility ideographs (not kana nor hangul). */
int bpe_bert_chinese(unsigned cp);
/* cp's lower case as the reference's lowercase gives it (Rust's
 * char::to_lowercase: one or two code points) into out; the count. */
int bpe_bert_lower(unsigned cp, unsigned out[2]);

#endif
