/* GGUF models found by name in the stores of Ollama and LM Studio, for
 * `--model NAME[:TAG]` and `--model PUBLISHER/REPO` (the Hugging Face cache
 * is model_file.h's hf_model_find; the caller tries it first). Reads
 * folders and manifests, opens no model. No SDL.
 *
 * Ollama ($OLLAMA_MODELS, else ~/.ollama/models, then the Linux service's
 * /usr/share/ollama/.ollama/models): NAME[:TAG] is the manifest
 * manifests/registry.ollama.ai/library/NAME/TAG (TAG "latest" when none),
 * ORG/NAME[:TAG] manifests/registry.ollama.ai/ORG/NAME/TAG, HOST/ORG/NAME[:TAG]
 * manifests/HOST/ORG/NAME/TAG; its layer of mediaType
 * application/vnd.ollama.image.model has the digest "sha256:HEX" of the
 * blob blobs/sha256-HEX, the GGUF file.
 *
 * LM Studio (~/.lmstudio/models, then ~/.cache/lm-studio/models):
 * PUBLISHER/REPO is the folder PUBLISHER/REPO/ of the first root that has
 * it, and the .gguf file in it; the vision projectors LM Studio keeps beside
 * a model (mmproj*.gguf) do not count. Several .gguf files there are refused,
 * naming them: PUBLISHER/REPO/FILE.gguf opens one of them (no guess between
 * quantizations).
 *
 * Returns: 0 found (*path malloc'd), 1 not found (looked lists every place
 * looked, for the caller's message that also names the Hugging Face cache),
 * negative ATTN_E_* on a broken store (a manifest that is not JSON or names
 * a missing blob, several .gguf files), err naming the file and field. */
#ifndef ATTNVIZ_MODEL_STORES_H
#define ATTNVIZ_MODEL_STORES_H

#include <stddef.h>

#include "attnviz/error.h"

#define OLLAMA_MODEL_MEDIA_TYPE "application/vnd.ollama.image.model"

/* Ollama's store, then LM Studio's. */
int model_store_find(const char *name, char **path, char *looked, size_t looked_n, AttnErr *err);
/* One store only (looked is appended to, so the two can share a buffer). */
int ollama_find(const char *name, char **path, char *looked, size_t looked_n, AttnErr *err);
int lmstudio_find(const char *name, char **path, char *looked, size_t looked_n, AttnErr *err);

#endif
