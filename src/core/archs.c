/* The architectures the program computes: one row each (arch.h). A test
 * adds one of its own with lm_arch_register (lm.h). */
#include <stddef.h>

#include "attnviz/arch.h"
#include "attnviz/gpt2.h"
#include "attnviz/llama.h"

const ArchDesc *const arch_builtin[] = {&desc_gpt2, &desc_llama, NULL};
