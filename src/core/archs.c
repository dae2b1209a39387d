/* The architectures the program computes: one row each (arch.h), the name
 * of its description desc_NAME in its file src/core/arch_NAME.c. A test
 * adds one of its own with lm_arch_register (lm.h). */
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
