/* The architectures the program computes: one row each (arch.h), the name
 * of its description desc_NAME in its file src/core/arch_NAME.c (a test
 * adds one of its own with lm_arch_register, lm.h); and the model classes
 * of each family, by which the config reader refuses a config.json whose
 * architectures name another family than its model_type. */
#include <stddef.h>

#include "attnviz/arch.h"

#define ARCHS(X) \
    X(gpt2)      \
    X(llama)     \
    X(olmo2)     \
    X(qwen3)     \
    X(gpt_neox)  \
    X(phi3)      \
    X(gemma)     \
    X(bert)      \
    X(t5)        \
    X(bart)

#define DECLARE(name) extern const ArchDesc desc_##name;
#define ROW(name) &desc_##name,
ARCHS(DECLARE)
const ArchDesc *const arch_builtin[] = {ARCHS(ROW) NULL};

/* transformers' class names: the family's prefix, then For…, Model, LMHead…
 * (GPT2LMHeadModel), WithLMHead… (T5WithLMHeadModel) or MT… (MarianMTModel).
 * Families that share a class prefix (gemma3's and gemma3_text's Gemma3…;
 * mt5's MT5… is a T5 by transformers' own subclassing) list every type. */
const ArchClass arch_classes[] = {
    {"GPT2", "GPT-2", "gpt2"},
    {"Llama", "Llama", "llama"},
    {"Mistral", "Mistral", "mistral"},
    {"Qwen2", "Qwen2", "qwen2"},
    {"Qwen3", "Qwen3", "qwen3"},
    {"Olmo2", "OLMo 2", "olmo2"},
    {"GPTNeoX", "GPT-NeoX", "gpt_neox"},
    {"Phi3", "Phi-3", "phi3"},
    {"Gemma2", "Gemma 2", "gemma2"},
    {"Gemma3", "Gemma 3", "gemma3 gemma3_text"},
    {"Bert", "BERT", "bert"},
    {"Roberta", "RoBERTa", "roberta"},
    {"XLMRoberta", "XLM-RoBERTa", "xlm-roberta"},
    {"DistilBert", "DistilBERT", "distilbert"},
    {"T5", "T5", "t5 mt5"},
    {"MT5", "T5", "t5 mt5"},
    {"Bart", "BART", "bart"},
    {"Marian", "Marian", "marian"},
    {NULL, NULL, NULL},
};
