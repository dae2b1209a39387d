/* attnviz: options, then the source the command line names (a model, an
 * attention file, else the sentence) opened through its SourceKind and
 * either printed and exported (the headless path) or shown in the window.
 * The only place that prints errors and picks exit codes. */
#include "attnviz/app.h"
#include "attnviz/attnio.h"
#include "attnviz/options.h"
#include "attnviz/source.h"

#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>

#define ATTNVIZ_VERSION "0.1.0"

static int fail(const AttnErr *err)
{
    char buf[1200];
    attn_err_format(err, buf, sizeof buf);
    fprintf(stderr, "attnviz: error: %s\n", buf);
    return 1;
}

/* The exit status of a command line that ends before any work: 2 for a
 * usage error, 1 for a bad value, 0 for --help and --version; else -1. */
static int options_done(int rc, const Options *o, const AttnErr *err)
{
    if (rc == -ATTN_E_PARSE) {
        fprintf(stderr, "attnviz: %s\nTry 'attnviz --help' for the options.\n", err->msg);
        return 2;
    }
    if (rc < 0)
        return fail(err);
    if (o->help || o->version) {
        fputs(o->help ? options_usage : "attnviz " ATTNVIZ_VERSION "\n", stdout);
        return 0;
    }
    return -1;
}

/* The attention file to open (*path, or NULL): --attention or a lone
 * .npy/.npz/.safetensors, a lone .json whose content is attention rather
 * than a session, or, printed or exported, the file or model a session
 * names (its layer, head, rollout, query and a model's text unless flags
 * say otherwise). A session for the window is the window's to open
 * (o->window_session), as Ctrl+O opens it. */
static int attention_path(Options *o, const char **path, AttnErr *err)
{
    *path = o->attention;
    if (o->attention || !o->session)
        return 0;
    static AttnSession sn;
    AttnPathKind kind = attn_path_kind(o->session);
    int window = !options_headless(o);
    if (kind == ATTN_PATH_SESSION && window) {
        /* the window opens it as Ctrl+O does: the model's text, the view, …
         * (a damaged session, or one whose file is gone, said here first) */
        if (attn_session_load(&sn, o->session, err) < 0)
            return -err->code;
        struct stat st;
        if (stat(sn.file, &st) != 0)
            return attn_err_set(err, ATTN_E_IO, o->session, 0, "%s: no such file or folder (moved or deleted?)",
                                sn.file);
        if (!source_for_path(sn.file))
            return attn_err_set(err, ATTN_E_IO, o->session, 0, "%s is not an attention file or a model folder",
                                sn.file);
        o->window_session = o->session;
        o->session = NULL;
        return 0;
    }
    if (kind == ATTN_PATH_SESSION) {
        if (attn_session_load(&sn, o->session, err) < 0)
            return -err->code;
        if (sn.has_text && !o->sentence)
            o->sentence = sn.text; /* a model's session: its text */
        /* flags given now win over the session's */
        o->layer = o->layer_set ? o->layer : sn.layer;
        o->head = o->head_set ? o->head : sn.head;
        o->rollout = o->rollout || sn.rollout;
        o->query = o->query >= 0 ? o->query : sn.query;
        o->attention = sn.file;
    } else if (kind == ATTN_PATH_FILE) {
        o->attention = o->session;
    } else {
        return 0;
    }
    o->session = NULL;
    *path = o->attention;
    return 0;
}

/* A source on the command line (path: an attention file, a model; NULL
 * for the sentence): open it with the flags; then print and export it (0
 * returned, *opened NULL), or keep it for the window (*opened). */
static int open_source(const Options *o, const SourceKind *k, const char *path, void **opened,
                       AttnErr *err)
{
    void *it;
    *opened = NULL;
    /* a model's induction probe runs on its random tokens, not on a text */
    int rc = o->probe && k->cli_probe ? k->cli_probe(o, path, &it, err) : k->cli_open(o, path, &it, err);
    if (rc < 0)
        return rc;
    if (!options_headless(o)) {
        *opened = it;
        return 0;
    }
    rc = k->cli_write(it, o, err);
    k->cli_free(it);
    return rc;
}

int main(int argc, char **argv)
{
    Options o;
    AttnErr err = {0};
    int status;

    /* a file size limit (ulimit -f) makes writes fail with EFBIG, which the
     * atomic writers report and clean up, instead of killing the program */
    signal(SIGXFSZ, SIG_IGN);
    int rc = options_parse(&o, argc, argv, &err);
    if ((status = options_done(rc, &o, &err)) >= 0) {
        options_free(&o);
        return status;
    }
    status = 1;
    const char *attn;
    const SourceKind *kind = NULL; /* the source of a path on the command line */
    void *shown = NULL;            /* what it opened, for the window */
    void *sentence = NULL;         /* the sentence's, shown or the window's default */
    if (attention_path(&o, &attn, &err) < 0)
        goto done;
    if (attn && (o.keys || o.score_set)) {
        fprintf(stderr, "attnviz: %s is an attention file: its maps are given, --keys and --score "
                        "apply to a sentence\nTry 'attnviz --help' for the options.\n", attn);
        status = 2;
        goto done;
    }
    if (o.model) { /* a language model computed here, on the sentence */
        attn = o.model;
        kind = &source_model;
    }
    if (attn && !kind && !(kind = source_for_path(attn)))
        kind = &source_file; /* --attention names one, whatever its name */
    if (attn) {
        if (open_source(&o, kind, attn, &shown, &err) < 0)
            goto done;
        if (!shown) { /* printed and exported */
            status = 0;
            goto done;
        }
    } else if (!o.window_session && (o.tokens || o.key_tokens || o.layer_set || o.rollout || o.drop ||
                                     o.view == VIEW_GRID || o.view == VIEW_HEADS || o.print == PRINT_HEAD_SCORES)) {
        fprintf(stderr, "attnviz: %s is a session, not an attention file: --tokens, --layer, "
                        "--rollout, --drop, --view grid|heads and --print head-scores need one\nTry 'attnviz --help' for the "
                        "options.\n", o.session);
        status = 2;
        goto done;
    }
    /* beside another source the sentence only opens, for the window */
    if (open_source(&o, &source_sentence, NULL, &sentence, &err) < 0)
        goto done;
    if (sentence) { /* the window owns what else was shown from here on */
        void *it = shown;
        shown = NULL;
        status = app_run(&o, sentence, kind, it, &err) < 0;
    } else {
        status = 0; /* printed and exported */
    }
done:
    if (status != 0 && err.code == ATTN_E_USAGE) { /* found when the model opened (--target) */
        fprintf(stderr, "attnviz: %s\nTry 'attnviz --help' for the options.\n", err.msg);
        status = 2;
        err.code = 0;
        err.msg[0] = '\0';
    }
    if (shown)
        kind->cli_free(shown);
    if (sentence)
        source_sentence.cli_free(sentence);
    if (status != 0 && (err.code || err.msg[0]))
        fail(&err);
    options_free(&o);
    return status;
}
